"""Random re-initialisation of the tiny Qwen3-TTS models.

Why: docs/qwen3.md, export findings.

Upstream's init leaves norms at 1, biases at 0, codebooks at 0 and the codec
output near 6e-8; a plain variance-preserving re-init clipped 96 % of the codec's
samples. Here every parameter is redrawn from one seeded generator by its role,
and ``rescale_outputs`` scales layers so their outputs have chosen stds on a
calibration input (the codec and the speaker encoder use it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: Norm gains 1 + N(0, NORM_JITTER); biases N(0, BIAS_STD).
NORM_JITTER: Final = 0.1
BIAS_STD: Final = 0.05
#: Embedding tables N(0, EMBED_STD) (codec, text and predictor tables).
EMBED_STD: Final = 1.0
#: The talker's codec_head gain, so its logits spread over a few units.
HEAD_GAIN: Final = 4.0
#: SnakeBeta log-parameters alpha/beta: N(0, SNAKE_STD) (exp(0) = upstream's init).
SNAKE_STD: Final = 0.2
#: Residual gains (codec LayerScale, ConvNeXt gamma): RESIDUAL_SCALE * (1 + jitter).
RESIDUAL_SCALE: Final = 0.3


def _kind(name: str, ndim: int) -> str:
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "bias":
        return "bias"
    if leaf == "cluster_usage":
        return "usage"
    if leaf in ("alpha", "beta"):
        return "snake"
    if leaf in ("gamma", "scale"):
        return "residual"
    if leaf == "embedding_sum" or (ndim == 2 and "embedding" in name):
        return "embedding"
    if ndim == 1:
        return "norm"
    return "weight"


def perturb(model: Any, seed: int) -> None:
    """Redraw every parameter of ``model`` (sorted by name) from one generator."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            kind = _kind(name, p.ndim)
            if kind == "bias":
                p.copy_(BIAS_STD * noise)
            elif kind == "usage":  # counts: positive, around 1
                p.copy_(torch.exp(0.3 * noise))
            elif kind == "snake":
                p.copy_(SNAKE_STD * noise)
            elif kind == "residual":
                p.copy_(RESIDUAL_SCALE * (1.0 + NORM_JITTER * noise))
            elif kind == "embedding":
                p.copy_(EMBED_STD * noise)
            elif kind == "norm":
                p.copy_(1.0 + NORM_JITTER * noise)
            else:
                gain = HEAD_GAIN if name.endswith("codec_head.weight") else 1.0
                p.copy_(gain * noise / p[0].numel() ** 0.5)


def rescale_outputs(module: Any, targets: Mapping[Any, float], *args: Any) -> None:
    """Scale each layer in ``targets`` (weight and bias) so its output in one
    ``module(*args)`` pass has the target std, in the order the forward runs them
    (LSUV): a hook rescales the layer and hands the rescaled output on, which is
    exactly what the rescaled layer computes (weight and bias scale together)."""
    import torch

    def hook(layer: Any, _inputs: Any, out: Any) -> Any:
        factor = targets[layer] / float(out.float().std())
        layer.weight.mul_(factor)
        if layer.bias is not None:
            layer.bias.mul_(factor)
        return out * factor

    handles = [layer.register_forward_hook(hook) for layer in targets]
    try:
        with torch.no_grad():
            module(*args)
    finally:
        for h in handles:
            h.remove()
