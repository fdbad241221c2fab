"""How far a vocoder's output for one frame reaches into its neighbours.

A window decode equals a whole-sequence decode (to float rounding) when every
kept frame has at least the receptive radius of real context on each side
(daemon/sdk/audio/windows.py), so the window overlap is sized from it.

Two ways to get it, both in frames on ONE side:
- `hifigan_radius`: from a HiFiGAN config (upsample rates and kernels, ResBlock1
  kernels and dilations), as GPT-SoVITS's SoVITS config states it;
- `bigvgan_radius`: the same for BigVGAN v2, whose resblocks add an
  anti-aliased activation before every conv (IndexTTS-2's vocoder);
- `onnx_radius`: by walking a conv stack's ONNX graph (Piper voices ship no
  generator config, only the graph), Conv / ConvTranspose attributes.

A 'same' conv of kernel k and dilation d at r samples per frame reaches
d * (k - 1) / 2 samples = d * (k - 1) / (2 r) frames; a ConvTranspose of kernel
k and stride s reads (k - 1) / s input samples per output sample, half of it on
each side. Chained layers add up; parallel branches (HiFiGAN's resblocks,
averaged) take the widest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx

# HiFiGAN conv_pre / conv_post kernel (upstream models.py Generator: Conv1d(.., 7,
# 1, padding=3) both ends; GPT-SoVITS and VITS/Piper alike).
PRE_KERNEL = 7
POST_KERNEL = 7


def hifigan_radius(
    upsample_rates: Sequence[int],
    upsample_kernels: Sequence[int],
    resblock_kernels: Sequence[int],
    resblock_dilations: Sequence[Sequence[int]],
    pre_kernel: int = PRE_KERNEL,
    post_kernel: int = POST_KERNEL,
    activation_reach: float = 0.0,
) -> float:
    """Receptive radius in frames of a HiFiGAN generator with ResBlock1 blocks
    (each dilation d: a k-conv of dilation d, then a k-conv of dilation 1);
    ``activation_reach``: samples an activation before each resblock conv and
    before conv_post reads on each side (0 for HiFiGAN's leaky ReLU)."""
    radius = (pre_kernel - 1) / 2
    rate = 1
    for u, k in zip(upsample_rates, upsample_kernels, strict=True):
        radius += (k - 1) / (2 * u) / rate
        rate *= u
        widest = max(
            sum(d * (rk - 1) / 2 + (rk - 1) / 2 + 2 * activation_reach for d in dils)
            for rk, dils in zip(resblock_kernels, resblock_dilations, strict=True)
        )
        radius += widest / rate
    return radius + (activation_reach + (post_kernel - 1) / 2) / rate


#: BigVGAN's anti-aliased activation (Activation1d: a 2x up-sampler and a
#: low-pass of kernel 12 each, at twice the rate): each reads 3 samples of its
#: input rate on each side, so the pair reaches 6
AMP_ACTIVATION_REACH = 6


def bigvgan_radius(
    upsample_rates: Sequence[int],
    upsample_kernels: Sequence[int],
    resblock_kernels: Sequence[int],
    resblock_dilations: Sequence[Sequence[int]],
) -> float:
    """Receptive radius in frames of BigVGAN (v2, AMPBlock1): HiFiGAN's stack
    with an anti-aliased activation before each conv of its resblocks and
    before conv_post."""
    return hifigan_radius(
        upsample_rates,
        upsample_kernels,
        resblock_kernels,
        resblock_dilations,
        activation_reach=AMP_ACTIVATION_REACH,
    )


def onnx_radius(model: onnx.ModelProto, frames_input: str) -> float:
    """Receptive radius in frames of the graph's output w.r.t. `frames_input`
    (the [.., channels, frames] latent), following every Conv/ConvTranspose.

    Tensors not downstream of the input (weights, masks) do not count; any other
    op passes the widest radius of its inputs on.
    """
    # tensor -> (samples per frame, radius in frames)
    seen: dict[str, tuple[int, float]] = {frames_input: (1, 0.0)}
    for node in model.graph.node:
        ins = [seen[i] for i in node.input if i in seen]
        if not ins:
            continue
        rate = max(r for r, _ in ins)
        radius = max(x for _, x in ins)
        a = {x.name: list(x.ints) for x in node.attribute if x.ints}
        kernel = a.get("kernel_shape", [1])[-1]
        if node.op_type == "Conv" and node.input[0] in seen:
            rate, radius = seen[node.input[0]]
            stride = a.get("strides", [1])[-1]
            if stride != 1:
                raise ValueError(f"{node.name}: strided Conv ({stride}) not handled")
            radius += a.get("dilations", [1])[-1] * (kernel - 1) / 2 / rate
        elif node.op_type == "ConvTranspose" and node.input[0] in seen:
            rate, radius = seen[node.input[0]]
            stride = a.get("strides", [1])[-1]
            radius += (kernel - 1) / (2 * stride) / rate
            rate *= stride
        for out in node.output:
            seen[out] = (rate, radius)
    (output,) = (o.name for o in model.graph.output[:1])
    if output not in seen:
        raise ValueError(f"output {output} does not depend on {frames_input}")
    return seen[output][1]


def overlap_for(radius: float) -> int:
    """The smallest whole-frame overlap that covers `radius`."""
    return math.ceil(radius - 1e-9)


def check_overlap(overlap: int, radius: float, what: str) -> None:
    """A ValueError with the numbers unless `overlap` covers the radius."""
    if overlap < overlap_for(radius):
        raise ValueError(
            f"{what}: window overlap {overlap} frames is less than the vocoder's "
            f"receptive radius {radius:.2f} frames; use overlap >= "
            f"{overlap_for(radius)} (and a window > 2 x overlap)"
        )


# Qwen3-TTS 12 Hz codec decoder (qwen-tts modeling_qwen3_tts_tokenizer_v2.py
# Qwen3TTSTokenizerV2Decoder): fixed kernels of its modules, not in its config.
#: pre_conv CausalConvNet(codebook_dim, latent_dim, kernel_size=3)
QWEN3_PRE_KERNEL = 3
#: ConvNeXtBlock dwconv, the decoder's first and last CausalConvNet, and each
#: residual unit's conv1 (kernel_size=7); conv2 is kernel 1
QWEN3_KERNEL = 7
#: DecoderResidualUnit dilations of every DecoderBlock
QWEN3_DILATIONS = (1, 3, 9)


def qwen3_codec_field(config: object) -> tuple[float, float]:
    """(left, right) receptive field in frames of one output frame of the 12 Hz
    codec decoder with ``config`` (a Qwen3TTSTokenizerV2DecoderConfig or any
    object with its fields).

    Every layer is causal: a CausalConvNet of kernel k and dilation d pads
    d * (k - 1) samples on the left only; a CausalTransConvNet of kernel 2u,
    stride u (trimmed u on the right) reads the input sample under it and the
    one before (kernel = stride: only the one under it); the pre-transformer's
    sliding window lets each layer look sliding_window - 1 frames back. So
    right is 0 and left is the sum along the chain, in frames: samples at
    rate r (samples per frame) count 1 / r."""
    left = (QWEN3_PRE_KERNEL - 1.0) + config.num_hidden_layers * (  # type: ignore[attr-defined]
        config.sliding_window - 1  # type: ignore[attr-defined]
    )
    rate = 1
    for factor in config.upsampling_ratios:  # type: ignore[attr-defined]
        rate *= factor  # TransConv kernel = stride: no reach back
        left += (QWEN3_KERNEL - 1) / rate  # ConvNeXt dwconv
    left += (QWEN3_KERNEL - 1) / rate  # the decoder's first conv
    for u in config.upsample_rates:  # type: ignore[attr-defined]
        left += 1 / rate  # TransConv(2u, u): one input sample back
        rate *= u
        left += sum(d * (QWEN3_KERNEL - 1) for d in QWEN3_DILATIONS) / rate
    left += (QWEN3_KERNEL - 1) / rate  # the last conv
    return left, 0.0


def qwen3_codec_context(config: object) -> int:
    """Whole frames of left context that make a window's kept frames equal a
    longer decode's (the left receptive field, rounded up)."""
    return overlap_for(qwen3_codec_field(config)[0])
