"""fit.py: known parameters come back from synthetic timings; LOO is a refit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scripts.bench.latency_model.fit import (
    BoardModel,
    Point,
    fit,
    leave_one_out,
    relative_errors,
    rms,
)

TRUE = {"o": 2e-3, "macs": 4e12, "bytes": 40e9}
#: (GMAC, MB): compute-heavy, memory-heavy and mixed graphs
SIZES = [(44, 170), (36, 554), (45, 180), (0.1, 250), (8.7, 58), (39, 30), (2, 14)]


def _points(form: str, noise: float = 0.0) -> list[Point]:
    truth = BoardModel(form, TRUE["o"], {"macs": TRUE["macs"], "bytes": TRUE["bytes"]})
    rng = np.random.default_rng(0)
    out = []
    for i, (g, mb) in enumerate(SIZES):
        f = {"macs": g * 1e9, "bytes": mb * 1e6}
        t = truth.seconds(f) * (1 + noise * rng.standard_normal())
        out.append(Point(f"p{i}", t, f))
    return out


@pytest.mark.parametrize("form", ["sum", "max"])
def test_fit_recovers_known_parameters(form):
    m = fit(_points(form), ("macs", "bytes"), form)
    assert m.overhead_s == pytest.approx(TRUE["o"], rel=1e-6)
    assert m.rates["macs"] == pytest.approx(TRUE["macs"], rel=1e-6)
    assert m.rates["bytes"] == pytest.approx(TRUE["bytes"], rel=1e-6)
    assert rms(relative_errors(m, _points(form))) < 1e-9


def test_leave_one_out_is_exact_on_noise_free_data_and_a_refit():
    pts = _points("sum", noise=0.05)
    loo = leave_one_out(pts, ("macs", "bytes"), "sum")
    for i, p in enumerate(pts):
        rest = pts[:i] + pts[i + 1 :]
        want = (fit(rest, ("macs", "bytes"), "sum").predict(p) - p.seconds) / p.seconds
        assert loo[i] == pytest.approx(want)
    # a held-out point is predicted worse than when it is fitted
    assert rms(loo) > rms(relative_errors(fit(pts), pts))
    assert max(abs(e) for e in leave_one_out(_points("sum"))) < 1e-6


def test_split_conv_rate():
    truth = BoardModel(
        "sum", 1e-3, {"mm_macs": 5e12, "conv_macs": 0.4e12, "bytes": 30e9}
    )
    pts = []
    for i, (g, mb) in enumerate(SIZES):
        f = {"mm_macs": g * 1e9 * (i % 2), "conv_macs": g * 1e9 * (1 - i % 2)}
        f["bytes"] = mb * 1e6
        pts.append(Point(f"p{i}", truth.seconds(f), f))
    m = fit(pts, ("mm_macs", "conv_macs", "bytes"), "sum")
    assert m.rates["conv_macs"] == pytest.approx(0.4e12, rel=1e-6)
    assert m.rates["mm_macs"] == pytest.approx(5e12, rel=1e-6)


def test_bandwidth_capped_at_the_memory_peak():
    # bytes never matter in these timings: the fit may not call them free
    pts = [Point(f"p{i}", 1e-3 + g * 1e9 / 4e12, {"macs": g * 1e9, "bytes": mb * 1e6})
           for i, (g, mb) in enumerate(SIZES)]  # fmt: skip
    m = fit(pts, ("macs", "bytes"), "max")
    assert m.rates["bytes"] == pytest.approx(64e9)
    assert fit(pts, ("macs", "bytes"), "max", max_rates={}).rates["bytes"] > 64e9


def test_unused_term_is_infinite_not_an_error():
    pts = [Point(f"p{i}", 1e-3 + mb * 1e6 / 40e9, {"macs": g * 1e9, "bytes": mb * 1e6})
           for i, (g, mb) in enumerate(SIZES)]  # fmt: skip
    assert math.isinf(fit(pts).rates["macs"])


def test_bad_input_is_a_clear_error():
    pts = _points("sum")
    with pytest.raises(ValueError, match="form"):
        fit(pts, form="min")
    with pytest.raises(ValueError, match="unknown features"):
        fit(pts, ("flops", "bytes"))
    with pytest.raises(ValueError, match="cannot fit"):
        fit(pts[:2])
    with pytest.raises(ValueError, match="positive"):
        fit([Point("z", 0.0, p.features) for p in pts])
