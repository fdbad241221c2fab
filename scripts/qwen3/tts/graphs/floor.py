"""Gates relative to upstream's own float32 floor.

A graph gated against upstream's float32 forward cannot be asked to be closer
to it than float32 itself is to the exact result: an ill-conditioned checkpoint
(a codec whose SnakeBeta frequencies amplify rounding, outputs at the clamp, a
near tie in the logits) leaves upstream's own float32 only 70-80 dB from its
float64 decode, and a fixed 90 dB bar refuses it.  So each gate measures, on
the same inputs, upstream's float32 against upstream cast to float64 (the
floor), and hexvoice's graph against the same float64 result:

- SNR (codec): the graph passes at >= floor - FLOOR_MARGIN_DB;
- relative error: at most the larger of the gate's fixed bound and
  REL_FLOOR_FACTOR x the floor (the fixed bound is three orders above float32
  rounding for a well-conditioned model, so it only widens where upstream's
  own float32 misses it);
- argmax agreement: at least upstream float32's own agreement with float64.

``in_float64`` casts a module to double in place and back (float32 -> float64
-> float32 is exact), so no copy of a 0.6B talker is made.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import numpy as np

from scripts.common.parity import rel_error, snr_db
from scripts.qwen3.asr.gates import GateResult

#: onnxruntime's float32 kernels sum in another order than torch's, so the
#: graph's distance to float64 scatters around upstream's: measured within
#: -0.2..+0.6 dB of upstream float32's on 10 tiny codecs (floors 66-116 dB,
#: graphs/floor tests); 3 dB is 1.4x upstream's error, far below what a wrong
#: weight costs (a 1 % change of one conv: 40+ dB)
FLOOR_MARGIN_DB: Final = 3.0
#: the same margin as an error ratio (3 dB of amplitude)
REL_FLOOR_FACTOR: Final = 10 ** (FLOOR_MARGIN_DB / 20)
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


def _f64(a: Any) -> np.ndarray:
    if hasattr(a, "detach"):
        a = a.detach().cpu().double().numpy()
    return np.asarray(a, np.float64)


def snr_gate(name: str, what: str, exact: Any, upstream: Any, got: Any) -> GateResult:
    """SNR of ``got`` vs upstream float64 ``exact``, bound by upstream float32's."""
    exact, upstream, got = _f64(exact), _f64(upstream), _f64(got)
    floor = snr_db(reference=exact, test=upstream)
    floor = min(floor, MAX_SNR_FLOOR_DB) if math.isfinite(floor) else MAX_SNR_FLOOR_DB
    value = snr_db(reference=exact, test=got)
    metric = f"SNR dB vs float64 {what} (upstream float32: {floor:.1f})"
    return GateResult(name, metric, value, floor - FLOOR_MARGIN_DB, True)


def rel_gate(
    name: str, bound: float, exact: Any, upstream: Any, got: Any
) -> GateResult:
    """Relative error of ``got`` vs float64, bound by max(bound, upstream's)."""
    exact, upstream, got = _f64(exact), _f64(upstream), _f64(got)
    floor = rel_error(reference=exact, test=upstream)
    value = rel_error(reference=exact, test=got)
    bound = max(bound, REL_FLOOR_FACTOR * floor)  # the threshold shows the floor
    return GateResult(name, "rel error vs float64 (CPU fp32)", value, bound, False)


def argmax_gate(name: str, exact: Any, upstream: Any, got: Any) -> GateResult:
    """Argmax agreement of ``got`` with float64, at least upstream float32's."""
    exact, upstream, got = _f64(exact), _f64(upstream), _f64(got)
    best = exact.argmax(-1)
    floor = float(np.mean(best == upstream.argmax(-1)))
    value = float(np.mean(best == got.argmax(-1)))
    metric = "teacher-forced argmax agreement vs float64"  # threshold: upstream's
    return GateResult(name, metric, value, floor, True)
