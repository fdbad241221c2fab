"""Timing helpers the benchmarks share: one piece of host work timed alone
(warm, or with every cache flushed first), and the columns and budget lines
their tables print."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

import numpy as np

#: calls per piece timed alone, warm and caches flushed; the flush buffer is
#: larger than the 32 MiB L3 of the x86 machines these run on
PIECE_CALLS: Final = 2000
FLUSHED_CALLS: Final = 200
FLUSH_BYTES: Final = 48 << 20


def flush_buffer() -> np.ndarray:
    """A buffer that, rewritten, evicts every cache line a piece used."""
    return np.zeros(FLUSH_BYTES // 8)


def alone(
    fn: Callable[[int], object], n: int, flush: np.ndarray | None = None
) -> list[float]:
    """Seconds per call of ``fn(i)``; with ``flush``, that buffer is rewritten
    before each call (caches hold none of the step's data, as after the NPU
    wrote the outputs to DRAM)."""
    out = []
    for i in range(n):
        if flush is not None:
            flush += 1.0
        t0 = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t0)
    return out


def stats_ms(seconds: list[float] | np.ndarray) -> str:
    """Median, min and max in ms, three right-aligned 9-wide columns."""
    ms = 1e3 * np.asarray(seconds)
    return f"{np.median(ms):>9.3f}{ms.min():>9.3f}{ms.max():>9.3f}"


def budget_line(name: str, ms: list[float], target: float) -> None:
    """Print the median and p90 of ``ms`` against a budget of ``target`` ms."""
    if not ms:
        print(f"{name}: no steps measured")
        return
    med, p90 = float(np.median(ms)), float(np.percentile(ms, 90))
    verdict = "ok" if med <= target else "OVER"
    print(
        f"{name}: host {med:.3f} ms median, {p90:.3f} ms p90 over {len(ms)} "
        f"(target <= {target} ms: {verdict})"
    )
