"""Receptive radius from a HiFiGAN config and from a conv graph; the overlap check."""

from __future__ import annotations

import math

import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from scripts.common.receptive_field import (  # noqa: E402
    check_overlap,
    hifigan_radius,
    onnx_radius,
    overlap_for,
)

# GPT-SoVITS v2Pro's SoVITS generator (s2v2Pro.json model section).
V2PRO = ([10, 8, 2, 2, 2], [16, 16, 8, 2, 2], [3, 7, 11], [[1, 3, 5]] * 3)


def test_a_single_conv_reaches_half_its_dilated_kernel() -> None:
    # no upsampling: conv_pre 7 (3) + resblock k=3 d=1 (1 + 1) + conv_post 7 (3)
    assert hifigan_radius([], [], [3], [[1]]) == 3.0 + 3.0
    assert hifigan_radius([2], [4], [3], [[2]]) == 3.0 + 3 / 4 + 3 / 2 + 3 / 2


def test_upstream_v2pro_needs_twelve_frames_and_the_tiny_overlap_is_refused() -> None:
    radius = hifigan_radius(*V2PRO)
    # 3 (conv_pre) + 6 (k=11 resblocks at 10 samples/frame) + the finer rates
    assert 11.0 < radius < 11.5 and overlap_for(radius) == 12
    check_overlap(12, radius, "vits_gen")  # the full shapes' overlap
    with pytest.raises(
        ValueError, match=r"overlap 6 frames .* 11\.28 frames; use overlap >= 12"
    ):
        check_overlap(6, radius, "vits_gen")  # the tiny shapes' overlap


def _conv_stack() -> onnx.ModelProto:
    """z [1,4,T] -> Conv k5 d2 -> ConvTranspose k4 s2 -> Conv k3 (x mask) -> out."""
    w = lambda name, *dims: helper.make_tensor(  # noqa: E731
        name, TensorProto.FLOAT, dims, [0.0] * math.prod(dims)
    )
    nodes = [
        helper.make_node(
            "Conv", ["z", "w1"], ["a"], kernel_shape=[5], dilations=[2], pads=[4, 4]
        ),
        helper.make_node(
            "ConvTranspose",
            ["a", "w2"],
            ["b"],
            kernel_shape=[4],
            strides=[2],
            pads=[1, 1],
        ),
        helper.make_node("Conv", ["b", "w3"], ["c"], kernel_shape=[3], pads=[1, 1]),
        helper.make_node("Mul", ["c", "mask"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "stack",
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 16])],
        [w("w1", 4, 4, 5), w("w2", 4, 4, 4), w("w3", 4, 4, 3), w("mask", 1, 1, 16)],
    )
    return helper.make_model(graph)


def test_graph_walk_adds_chained_convs_at_their_rate() -> None:
    # 2 * 4 / 2 = 4 frames, (4 - 1) / (2 * 2) = 0.75, then 1 sample at 2/frame
    assert onnx_radius(_conv_stack(), "z") == pytest.approx(4 + 0.75 + 0.5)
    with pytest.raises(ValueError, match="does not depend on"):
        onnx_radius(_conv_stack(), "nothing")


def test_qwen3_codec_field_is_where_a_code_stops_reaching() -> None:
    """A code R frames back changes the last frame's samples, one R + 1 back
    leaves them bit for bit: R from the config is the decoder's own reach
    (the tiny codec: 2 layers x 71 frames of sliding window and the convs)."""
    pytest.importorskip("torch")
    from tests.qwen3_fixtures import require_qwen_tts

    require_qwen_tts()
    import numpy as np
    import torch

    from scripts.common.receptive_field import qwen3_codec_context, qwen3_codec_field
    from scripts.qwen3.tts.tiny_codec import build_codec

    dec = build_codec(0).decoder
    r = qwen3_codec_context(dec.config)
    assert qwen3_codec_field(dec.config)[1] == 0.0  # causal: no right context
    assert r == 154
    n = r + 4
    codes = torch.from_numpy(np.random.default_rng(0).integers(0, 128, (1, 16, n)))
    with torch.no_grad():
        base = dec(codes)[0, 0, -1920:]
        for back, reaches in ((r, True), (r + 1, False)):
            other = codes.clone()
            other[0, :, n - 1 - back] = (other[0, :, n - 1 - back] + 1) % 128
            changed = bool((dec(other)[0, 0, -1920:] != base).any())
            assert changed == reaches, back


def test_qwen3_codec_field_of_the_released_codec() -> None:
    """Qwen3-TTS-Tokenizer-12Hz's decoder config (upstream's defaults): 8
    layers x 71 frames of sliding window + 2 of pre_conv + 9.4 of convs."""
    from types import SimpleNamespace

    from scripts.common.receptive_field import qwen3_codec_context, qwen3_codec_field

    real = SimpleNamespace(
        num_hidden_layers=8,
        sliding_window=72,
        upsampling_ratios=(2, 2),
        upsample_rates=(8, 5, 4, 3),
    )
    left, right = qwen3_codec_field(real)
    assert right == 0.0 and 579 < left < 580 and qwen3_codec_context(real) == 580


def test_bigvgan_adds_its_activations_to_hifigan_reach() -> None:
    """BigVGAN v2 is HiFiGAN's stack plus an anti-aliased activation before
    every resblock conv and before conv_post, each reaching
    AMP_ACTIVATION_REACH samples at its rate: one stage of rate 2, one
    resblock of kernel 3 and one dilation adds 2 activations there and one
    after; the released 22 kHz config (six stages) needs 40 frames."""
    from scripts.common.receptive_field import (
        AMP_ACTIVATION_REACH,
        bigvgan_radius,
        overlap_for,
    )

    plain = hifigan_radius([2], [4], [3], [[1]])
    assert bigvgan_radius([2], [4], [3], [[1]]) == plain + 3 * AMP_ACTIVATION_REACH / 2
    released = bigvgan_radius(
        [4, 4, 2, 2, 2, 2], [8, 8, 4, 4, 4, 4], [3, 7, 11], [[1, 3, 5]] * 3
    )
    assert overlap_for(released) == 40
