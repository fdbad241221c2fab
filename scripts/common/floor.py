"""Gates relative to upstream's own float32 floor (every build's CPU gates).

A graph gated against upstream's float32 forward cannot be asked to be closer
to it than float32 itself is to the exact result: an ill-conditioned checkpoint
(a codec whose SnakeBeta frequencies amplify rounding, attention scores in the
thousands, outputs at the clamp, a near tie in the logits) leaves upstream's
own float32 only 70-80 dB (or 1e-4..1e-3 relative) from its float64 result,
and a fixed bar refuses it.  So each gate measures, on the same inputs,
upstream's float32 against upstream cast to float64 (the floor), and
hexvoice's graph against the same float64 result:

- SNR: the graph passes at >= floor - FLOOR_MARGIN_DB (or the gate's fixed bar
  where that is lower: a fixed bar then only ever widens);
- relative error: at most the larger of the gate's fixed bound and
  REL_FLOOR_FACTOR x the floor (the fixed bound is three orders above float32
  rounding for a well-conditioned model, so it only widens where upstream's
  own float32 misses it);
- argmax / index agreement: at least upstream float32's own agreement with
  float64; a graph's pick that differs from float64's where float64 scores
  both within REL_FLOOR_FACTOR x upstream float32's own error on that row (or
  FP32_TIE_ULPS float32 ulps) is a tie float32 cannot resolve, and counts as
  agreeing.

``in_float64`` casts a module to double in place and back (float32 -> float64
-> float32 is exact), so no copy of a 0.6B model is made.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import numpy as np

from scripts.common.gate_result import GateResult
from scripts.common.parity import rel_error, snr_db

__all__ = [
    "FLOOR_MARGIN_DB",
    "FP32_TIE_ULPS",
    "GateResult",
    "MAX_SNR_FLOOR_DB",
    "REL_FLOOR_FACTOR",
    "argmax_gate",
    "as64",
    "in_float64",
    "index_gate",
    "rel_gate",
    "snr_gate",
]

#: onnxruntime's float32 kernels sum in another order than torch's, so the
#: graph's distance to float64 scatters around upstream's: measured within
#: -0.2..+0.6 dB of upstream float32's on 10 tiny codecs (floors 66-116 dB,
#: tests/scripts/common/test_floor.py); 3 dB is 1.4x upstream's error, far
#: below what a wrong weight costs (a 1 % change of one conv: 40+ dB)
FLOOR_MARGIN_DB: Final = 3.0
#: the same margin as an error ratio (3 dB of amplitude)
REL_FLOOR_FACTOR: Final = 10 ** (FLOOR_MARGIN_DB / 20)
#: two scores this many float32 ulps (of the best) apart are a tie for any
#: float32 implementation: onnxruntime's and torch's sums of the same terms
#: land a few ulps apart (as scripts/common/sim_gate.py TIE_FP16_ULPS in fp16)
FP32_TIE_ULPS: Final = 4
#: float32 resolves about 2^-24 of full scale (~144 dB); an infinite floor
#: (upstream float32 equal to float64, e.g. an all-clamped wave) asks this much
MAX_SNR_FLOOR_DB: Final = 140.0


@contextmanager
def in_float64(module: Any) -> Iterator[Any]:
    """``module`` cast to float64 in place for the block, float32 after."""
    module.double()
    try:
        yield module
    finally:
        module.float()


def as64(a: Any) -> Any:
    """A float32 array or tensor as float64 (the float64 run's inputs); any
    other value unchanged."""
    if isinstance(a, np.ndarray) and a.dtype == np.float32:
        return a.astype(np.float64)
    if getattr(a, "dtype", None) is not None and str(a.dtype) == "torch.float32":
        return a.double()
    return a


def _f64(a: Any) -> np.ndarray:
    if hasattr(a, "detach"):
        a = a.detach().cpu().double().numpy()
    return np.asarray(a, np.float64)


def snr_gate(
    name: str,
    what: str,
    exact: Any,
    upstream: Any,
    got: Any,
    bound: float | None = None,
) -> GateResult:
    """SNR of ``got`` vs upstream float64 ``exact``, bound by upstream
    float32's less the margin (and by ``bound`` dB where that is lower)."""
    exact, upstream, got = _f64(exact), _f64(upstream), _f64(got)
    floor = snr_db(reference=exact, test=upstream)
    floor = min(floor, MAX_SNR_FLOOR_DB) if math.isfinite(floor) else MAX_SNR_FLOOR_DB
    value = snr_db(reference=exact, test=got)
    metric = f"SNR dB vs float64 {what} (upstream float32: {floor:.1f})"
    threshold = floor - FLOOR_MARGIN_DB
    if bound is not None:
        threshold = min(threshold, bound)
    return GateResult(name, metric, value, threshold, True)


def rel_gate(
    name: str, bound: float, exact: Any, upstream: Any, got: Any
) -> GateResult:
    """Relative error of ``got`` vs float64, bound by max(bound, upstream's)."""
    exact, upstream, got = _f64(exact), _f64(upstream), _f64(got)
    if got.shape != exact.shape:
        raise ValueError(f"{name}: graph output {got.shape} vs upstream {exact.shape}")
    floor = rel_error(reference=exact, test=upstream)
    value = rel_error(reference=exact, test=got)
    bound = max(bound, REL_FLOOR_FACTOR * floor)  # the threshold shows the floor
    return GateResult(name, "rel error vs float64 (CPU fp32)", value, bound, False)


def argmax_gate(name: str, exact: Any, upstream: Any, got: Any) -> GateResult:
    """Argmax agreement of ``got`` with float64 up to upstream float32's ties,
    at least upstream float32's own agreement."""
    exact, upstream, got = _f64(exact), _f64(upstream), _f64(got)
    v = exact.shape[-1]
    exact, upstream, got = (np.reshape(a, (-1, v)) for a in (exact, upstream, got))
    rows = np.arange(len(exact))
    best, pick = exact.argmax(-1), got.argmax(-1)
    floor = float(np.mean(best == upstream.argmax(-1)))
    ulps = FP32_TIE_ULPS * np.spacing(np.abs(exact[rows, best]).astype(np.float32))
    resolution = np.maximum(REL_FLOOR_FACTOR * np.abs(upstream - exact).max(-1), ulps)
    tie = (pick != best) & (exact[rows, best] - exact[rows, pick] <= resolution)
    value = float(np.mean((pick == best) | tie))
    metric = "teacher-forced argmax agreement vs float64"  # threshold: upstream's
    return GateResult(name, metric, value, floor, True)


def index_gate(name: str, what: str, exact: Any, upstream: Any, got: Any) -> GateResult:
    """Share of picked indices (tokens, codes) ``got`` equal to float64's, at
    least upstream float32's own share."""
    exact, upstream, got = (np.asarray(a).ravel() for a in (exact, upstream, got))
    floor = float(np.mean(exact == upstream)) if len(exact) else 1.0
    value = float(np.mean(exact == got)) if len(got) == len(exact) else 0.0
    return GateResult(name, f"{what} equal to float64's", value, floor, True)
