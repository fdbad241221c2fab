"""Fit every candidate model to the reference port's timings and pick one.

The candidates (fit.py forms x feature sets) are few and physically motivated.
The predictions use the one with the smallest leave-one-out RMS relative error
among those whose every rate is finite (a rate fitted to infinity prices that
work at zero, so the model could not rank graphs that differ in it, e.g. the
Qwen3 decoders' MatMuls); LOO RMS within TIE of the best counts as a tie, won
by the smaller in-sample RMS. The issue's plain roofline (MACs, bytes,
overhead) is always reported next to it, whatever its error.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from scripts.bench.latency_model.fit import (
    FORMS,
    BoardModel,
    Point,
    fit,
    leave_one_out,
    relative_errors,
    rms,
)
from scripts.bench.latency_model.port import TIMINGS, port_points

#: name -> features (fit.py): the roofline, split conv rate, split I/O bytes,
#: an elementwise term, and both of the latter two
VARIANTS: Final = {
    "roofline": ("macs", "bytes"),
    "conv": ("mm_macs", "conv_macs", "bytes"),
    "conv+io": ("mm_macs", "conv_macs", "weight_bytes", "io_bytes"),
    "elem": ("macs", "bytes", "elementwise"),
    "conv+elem": ("mm_macs", "conv_macs", "bytes", "elementwise"),
}
ROOFLINE: Final = "roofline"
#: LOO RMS differences below one percentage point are noise with 7 points
TIE: Final = 0.01


@dataclass(frozen=True)
class FitRow:
    variant: str
    model: BoardModel
    points: tuple[Point, ...]
    errors: tuple[float, ...]  # in-sample relative error per point
    loo: tuple[float, ...]  # leave-one-out relative error per point

    @property
    def fit_rms(self) -> float:
        return rms(self.errors)

    @property
    def loo_rms(self) -> float:
        return rms(self.loo)


def fit_table(points: Sequence[Point], label: str = "") -> list[FitRow]:
    rows = []
    for variant, feats in VARIANTS.items():
        for form in FORMS:
            m = fit(points, feats, form, label=f"{label} {variant}/{form}".strip())
            rows.append(
                FitRow(
                    variant,
                    m,
                    tuple(points),
                    tuple(relative_errors(m, points)),
                    tuple(leave_one_out(points, feats, form)),
                )
            )
    return rows


def finite(model: BoardModel) -> bool:
    return all(math.isfinite(r) for r in model.rates.values())


def best(rows: Sequence[FitRow]) -> FitRow:
    """The module docstring's rule."""
    pool = [r for r in rows if finite(r.model)] or list(rows)
    low = min(r.loo_rms for r in pool)
    return min((r for r in pool if r.loo_rms <= low + TIE), key=lambda r: r.fit_rms)


def roofline(rows: Sequence[FitRow]) -> FitRow:
    return best([r for r in rows if r.variant == ROOFLINE])


@functools.cache  # pure function of constants; ~10 s of fits, done once
def board_model(timings: str = "profiled") -> BoardModel:
    """The selected model fitted to the port's ``profiled`` or ``dispatch``
    timings (cheap: the port graphs' costs are constants, port.PORT_COSTS)."""
    if timings not in TIMINGS:
        raise ValueError(f"timings must be one of {sorted(TIMINGS)}, got {timings!r}")
    sel = best(fit_table(port_points(TIMINGS["profiled"]), "profiled"))
    if timings == "profiled":
        return sel.model
    # the same form calibrated on the other clock (report.py: one form, two sets)
    return fit(
        port_points(TIMINGS[timings]),
        VARIANTS[sel.variant],
        sel.model.form,
        label=f"{timings} {sel.variant}/{sel.model.form}",
    )
