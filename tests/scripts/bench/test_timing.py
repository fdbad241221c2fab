"""timing.py: a piece timed alone, the ms columns and the budget line."""

from __future__ import annotations

import numpy as np
import pytest

from scripts.bench import timing


def test_alone_times_each_call_and_rewrites_the_flush_buffer() -> None:
    seen: list[int] = []
    flush = np.zeros(4)
    out = timing.alone(seen.append, 3, flush)
    assert seen == [0, 1, 2]
    assert len(out) == 3 and all(s >= 0 for s in out)
    assert flush.tolist() == [3.0] * 4  # rewritten before every call
    assert timing.flush_buffer().nbytes == timing.FLUSH_BYTES


def test_stats_ms_is_median_min_max_in_ms() -> None:
    assert timing.stats_ms([0.003, 0.001, 0.002]) == "    2.000    1.000    3.000"


def test_budget_line(capsys: pytest.CaptureFixture[str]) -> None:
    timing.budget_line("step", [0.1, 0.2, 0.3], 0.25)
    timing.budget_line("step", [0.5, 0.6], 0.25)
    timing.budget_line("step", [], 0.25)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "step: host 0.200 ms median, 0.280 ms p90 over 3 (target <= 0.25 ms: ok)"
    )
    assert lines[1].endswith("(target <= 0.25 ms: OVER)")
    assert lines[2] == "step: no steps measured"
