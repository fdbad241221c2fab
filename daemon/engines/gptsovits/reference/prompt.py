"""Prompt semantic tokens of a reference clip on the ``hubert`` + ``ssl_quant`` graphs.

Upstream TTS._set_prompt_semantic (docs/gpt-sovits.md, reference audio):
the 16 kHz clip (3..10 s) + int(32000 * 0.3) = 9600 zeros -> chinese-hubert-base
-> ssl_proj -> nearest codebook entry per 25 Hz frame. The graphs take a fixed
window (``ReferenceParams.hubert_samples``): the clip + zeros is written at its
start, the rest is zero, and two 0/1 masks mark the valid first-conv frames and
output frames (the graph normalises and attends over those only, so the valid
outputs equal HuBERT run on the unpadded clip; scripts/gptsovits/models/hubert.py).

``ssl_quant`` either returns the codes (``codes`` [1, T // 2]) or stops at
ssl_proj (``proj`` [1, ssl, T // 2]); then the nearest entry of the bundle's
codebook (cpu/vits_codebook.npy) is found here in float32, with upstream's
distance (quantize.EuclideanCodebook.quantize).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

from daemon.engines.gptsovits.reference.params import (
    HUBERT_RATE,
    MAX_REF_SECONDS,
    MIN_REF_SECONDS,
    PROMPT_ZEROS,
    ReferenceParams,
)
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.bundles.manifest import BundleError

if TYPE_CHECKING:
    from daemon.sdk.cancel import CancelToken
    from daemon.sdk.graphs import Runner

#: chinese-hubert-base config.json conv_kernel / conv_stride (hop 320 at 16 kHz).
CONV_KERNELS: Final = (10, 3, 3, 3, 3, 2, 2)
CONV_STRIDES: Final = (5, 2, 2, 2, 2, 2, 2)
#: ssl_proj stride: two 50 Hz HuBERT frames per 25 Hz token.
FRAMES_PER_TOKEN: Final = 2
#: upstream's bounds on the 16 kHz length (wav16k.shape[0] < 48000 or > 160000)
MIN_SAMPLES: Final = int(MIN_REF_SECONDS * HUBERT_RATE)
MAX_SAMPLES: Final = int(MAX_REF_SECONDS * HUBERT_RATE)


def conv_lengths(samples: int) -> list[int]:
    """Frames after each HuBERT feature-extractor conv (HF
    ``_get_feat_extract_output_lengths``)."""
    out, n = [], samples
    for k, s in zip(CONV_KERNELS, CONV_STRIDES, strict=True):
        n = (n - k) // s + 1
        out.append(n)
    return out


def nearest_codes(proj: np.ndarray, codebook: np.ndarray) -> np.ndarray:
    """proj [n, ssl] -> int64 [n]: argmax of -(|x|² - 2 x·e + |e|²), upstream's
    expression (first index on ties, as torch.max)."""
    x = np.asarray(proj, np.float32)
    e = np.asarray(codebook, np.float32)
    dist = -((x * x).sum(1, keepdims=True) - 2 * (x @ e.T) + (e * e).sum(1)[None])
    return np.argmax(dist, axis=1).astype(np.int64)


def _shape(runner: Runner, name: str, where: Sequence) -> tuple[int, ...]:
    for t in where:
        if t.name == name:
            return tuple(t.shape)
    raise BundleError(f"graph {runner.key}: no tensor {name!r}")


class PromptTokens:
    """``tokens = PromptTokens(hubert, ssl_quant, rp)(audio16k)``: upstream's
    prompt semantic tokens (int64 [n]) of a 16 kHz mono float clip."""

    def __init__(
        self,
        hubert: Runner,
        ssl_quant: Runner,
        rp: ReferenceParams,
        codebook: np.ndarray | None = None,
    ) -> None:
        s = rp.hubert_samples
        if s < MIN_SAMPLES + PROMPT_ZEROS:
            raise BundleError(
                f"params.reference.hubert_samples {s} cannot hold a "
                f"{MIN_REF_SECONDS:g} s reference + {PROMPT_ZEROS} zeros"
            )
        lengths = conv_lengths(s)
        self.samples, t0, t = s, lengths[0], lengths[-1]
        hidden = _shape(hubert, "hidden", hubert.outputs)
        if len(hidden) != 3:
            raise BundleError(f"graph {hubert.key}: 'hidden' is {list(hidden)}")
        dim = hidden[1]
        self.hubert = BoundGraph(
            hubert,
            {
                "audio": (1, s),
                "conv_mask": (1, 1, t0),
                "frame_mask": (1, 1, t),
                "hidden": (1, dim, t),
            },
        )
        out = {o.name for o in ssl_quant.outputs}
        self.in_graph = "codes" in out
        k = t // FRAMES_PER_TOKEN
        io = {"ssl": (1, dim, t)}
        if self.in_graph:
            io["codes"] = (1, k)
        else:
            io["proj"] = (1, dim, k)
            if codebook is None or codebook.ndim != 2 or codebook.shape[1] != dim:
                got = None if codebook is None else list(codebook.shape)
                raise BundleError(
                    f"graph {ssl_quant.key} returns ssl_proj features: the "
                    f"[bins, {dim}] codebook is needed, got {got}"
                )
        self.codebook = codebook
        self.quant = BoundGraph(ssl_quant, io)

    def __call__(
        self, audio16k: np.ndarray, cancel: CancelToken | None = None
    ) -> np.ndarray:
        x = np.asarray(audio16k)
        if x.ndim != 1 or not np.issubdtype(x.dtype, np.floating):
            raise ValueError(
                f"reference audio must be 1-d float samples, got {x.dtype} "
                f"{list(x.shape)}"
            )
        n = len(x)
        if not MIN_SAMPLES <= n <= MAX_SAMPLES:
            raise ValueError(
                f"reference is {n / HUBERT_RATE:.2f} s; it must be "
                f"{MIN_REF_SECONDS:g}-{MAX_REF_SECONDS:g} s (as upstream)"
            )
        total = n + PROMPT_ZEROS
        if total > self.samples:
            raise ValueError(
                f"reference is {n / HUBERT_RATE:.2f} s; this bundle's hubert graph "
                f"holds {(self.samples - PROMPT_ZEROS) / HUBERT_RATE:.2f} s"
            )
        if not np.isfinite(x).all():
            raise ValueError("reference audio has NaN or infinite samples")
        lengths = conv_lengths(total)
        b = self.hubert.bind()
        b["audio"][0, :n] = x
        b["audio"][0, n:] = 0.0  # upstream's zeros, then the window's padding
        _mask(b["conv_mask"], lengths[0])
        _mask(b["frame_mask"], lengths[-1])
        if cancel is not None:
            cancel.check()
        self.hubert.execute()
        q = self.quant.bind()
        q["ssl"][...] = b["hidden"]
        if cancel is not None:
            cancel.check()
        self.quant.execute()
        k = lengths[-1] // FRAMES_PER_TOKEN
        if self.in_graph:
            return np.asarray(q["codes"][0, :k], np.int64)
        return nearest_codes(q["proj"][0, :, :k].T, self.codebook)


def _mask(buf: np.ndarray, n: int) -> None:
    buf[..., :n] = 1.0
    buf[..., n:] = 0.0
