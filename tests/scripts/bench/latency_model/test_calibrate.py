"""calibrate.py / port.py: the port's points, the selection rule, the API model."""

from __future__ import annotations

import math

import pytest

from scripts.bench.latency_model.calibrate import best, board_model, finite, fit_table
from scripts.bench.latency_model.fit import fit
from scripts.bench.latency_model.port import (
    PORT_IO,
    TIMINGS,
    port_io_bytes,
    port_points,
)


def test_port_points_use_the_port_float32_io():
    pts = {p.name: p for p in port_points(TIMINGS["profiled"])}
    assert set(pts) == {*TIMINGS["profiled"], "t2s_decode_768*"}
    # t2s_decode: x, kT + v caches, mask, logits, k_new + v_new, 4 bytes each
    kv = 24 * 16 * 32 * 1024
    want = 4 * (512 + 2 * kv + 1024 + 1025 + 2 * 24 * 16 * 32)
    assert port_io_bytes("t2s_decode") == want
    assert pts["t2s_decode"].features["io_bytes"] == want
    assert pts["t2s_decode_768*"].seconds == pytest.approx(0.85 * 11.95e-3)
    assert set(PORT_IO) >= set(TIMINGS["profiled"])


def test_table_loo_is_a_refit_without_the_point():
    pts = port_points(TIMINGS["profiled"])
    rows = fit_table(pts, "profiled")
    row = next(r for r in rows if (r.variant, r.model.form) == ("roofline", "sum"))
    i = 3
    rest = pts[:i] + pts[i + 1 :]
    m = fit(rest, ("macs", "bytes"), "sum")
    assert row.loo[i] == pytest.approx(
        (m.predict(pts[i]) - pts[i].seconds) / pts[i].seconds
    )
    assert row.loo_rms == pytest.approx(
        math.sqrt(sum(e * e for e in row.loo) / len(pts))
    )


def test_selected_model_is_finite_and_best_loo_within_tie():
    rows = fit_table(port_points(TIMINGS["profiled"]), "profiled")
    sel = best(rows)
    assert finite(sel.model)
    low = min(r.loo_rms for r in rows if finite(r.model))
    assert sel.loo_rms <= low + 0.01


def test_board_model_both_clocks_same_form():
    p, d = board_model("profiled"), board_model("dispatch")
    assert (p.form, set(p.rates)) == (d.form, set(d.rates))
    with pytest.raises(ValueError, match="timings"):
        board_model("wall")
