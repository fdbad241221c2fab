"""The roofline: latency of one graph call from its MACs and bytes, fitted.

t = o + combine(compute, memory) + other, with a fixed per-call overhead ``o``:

- compute = sum of MAC features / their rates (``macs``, or ``mm_macs`` and
  ``conv_macs`` apart: the HTP runs 1-D convolutions far below its MatMul rate;
  the port's vocoder does 39 GMAC in 97 ms, its g2pw BERT 44 GMAC in 18 ms);
- memory = sum of byte features / their rates (``bytes``, or ``weight_bytes``
  and ``io_bytes`` apart: the port feeds float32 I/O that the HTP converts);
- other = ``elementwise`` / its rate;
- combine = ``sum`` (a + b) or ``max`` (max(a, b)).

Fitted to minimise the squared *relative* error (the timings span 10–97 ms, so
an absolute fit would ignore the short graphs). ``sum`` is linear in o and the
inverse rates: weighted non-negative least squares, exact. ``max`` is piecewise
linear: every split of the points into compute- and memory-bound is solved the
same way and the best split (scored by the true max model) wins. A rate fitted
to 0 cost is infinite (the term does not matter for these points).
Leave-one-out: refit without each point and predict it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from scipy.optimize import nnls

FORMS = ("sum", "max")
COMPUTE = frozenset({"macs", "mm_macs", "conv_macs"})
MEMORY = frozenset({"bytes", "weight_bytes", "io_bytes"})
OTHER = frozenset({"elementwise"})
FEATURES = COMPUTE | MEMORY | OTHER
_INF = float("inf")
#: QCS8550 LPDDR5X peak, the bandwidth the Qwen3 benchmarks price a step at
#: (scripts/bench/qwen3/sizes_common.py BANDWIDTH_BPS): no fitted byte rate may
#: exceed it, or a point where bytes do not show (the port's bert streams 554 MB in
#: 13.9 ms) would make every byte free and weight-heavy decodes look cheap
PEAK_BYTES_PER_S: Final = 64e9
MAX_RATES: Final = {name: PEAK_BYTES_PER_S for name in MEMORY}
#: a term under this share of every timing is taken as absent
NEGLIGIBLE: Final = 1e-9


@dataclass(frozen=True)
class Point:
    name: str
    seconds: float
    features: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BoardModel:
    """Fitted roofline: overhead in s, a rate (unit/s) per feature."""

    form: str
    overhead_s: float
    rates: Mapping[str, float]
    label: str = ""

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {self.form!r}")
        unknown = set(self.rates) - FEATURES
        if unknown:
            raise ValueError(
                f"unknown features {sorted(unknown)}; known {sorted(FEATURES)}"
            )

    def terms(self, features: Mapping[str, float]) -> dict[str, float]:
        """Seconds per feature group: compute, memory, other."""
        out = {"compute": 0.0, "memory": 0.0, "other": 0.0}
        for name, rate in self.rates.items():
            group = (
                "compute"
                if name in COMPUTE
                else "memory"
                if name in MEMORY
                else "other"
            )
            out[group] += features[name] / rate
        return out

    def seconds(self, features: Mapping[str, float]) -> float:
        t = self.terms(features)
        c, m = t["compute"], t["memory"]
        return (
            self.overhead_s + (c + m if self.form == "sum" else max(c, m)) + t["other"]
        )

    def predict(self, p: Point) -> float:
        return self.seconds(p.features)

    @property
    def n_params(self) -> int:
        return 1 + len(self.rates)


def _solve(rows: np.ndarray, t: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """x >= lower minimising sum(((rows @ x) - t) / t)^2; a coefficient whose
    term is below NEGLIGIBLE of every timing is the solver's rounding: 0."""
    a, b = rows / t[:, None], np.ones_like(t)
    # y = x - lower >= 0: plain NNLS (much faster than a bounded solver)
    y, _ = nnls(a, b - a @ lower)
    x = y + lower
    share = x * np.max(rows / t[:, None], axis=0)
    return np.where((share < NEGLIGIBLE) & (x > lower), lower, x)


def _model(form: str, names: Sequence[str], x: np.ndarray, label: str) -> BoardModel:
    rates = {n: (1.0 / float(v) if v > 0 else _INF) for n, v in zip(names, x[1:])}
    return BoardModel(form, float(x[0]), rates, label)


def fit(
    points: Sequence[Point],
    features: Sequence[str] = ("macs", "bytes"),
    form: str = "sum",
    label: str = "",
    max_rates: Mapping[str, float] = MAX_RATES,
) -> BoardModel:
    """Least relative-squared-error model over ``features`` through ``points``,
    no rate above ``max_rates`` (feature -> unit/s)."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    unknown = set(features) - FEATURES
    if unknown:
        raise ValueError(
            f"unknown features {sorted(unknown)}; known {sorted(FEATURES)}"
        )
    if len(points) < 1 + len(features):
        raise ValueError(
            f"{len(points)} points cannot fit {1 + len(features)} parameters"
        )
    t = np.array([p.seconds for p in points], float)
    if np.any(t <= 0):
        raise ValueError("timings must be positive")
    names = list(features)
    lower = np.array([0.0] + [1.0 / max_rates.get(n, _INF) for n in names])
    table = np.array([[1.0] + [float(p.features[n]) for n in names] for p in points])
    if form == "sum":
        return _model(form, names, _solve(table, t, lower), label)
    comp = [i + 1 for i, n in enumerate(names) if n in COMPUTE]
    mem = [i + 1 for i, n in enumerate(names) if n in MEMORY]
    best: tuple[float, BoardModel] | None = None
    for split in itertools.product((True, False), repeat=len(points)):
        bound = np.array(split)  # True: compute-bound
        rows = table.copy()
        rows[:, comp] *= bound[:, None]
        rows[:, mem] *= ~bound[:, None]
        m = _model(form, names, _solve(rows, t, lower), label)
        err = float(np.sum(((np.array([m.predict(p) for p in points]) - t) / t) ** 2))
        if best is None or err < best[0]:
            best = (err, m)
    assert best is not None
    return best[1]


def relative_errors(model: BoardModel, points: Sequence[Point]) -> list[float]:
    return [(model.predict(p) - p.seconds) / p.seconds for p in points]


def leave_one_out(
    points: Sequence[Point],
    features: Sequence[str] = ("macs", "bytes"),
    form: str = "sum",
    max_rates: Mapping[str, float] = MAX_RATES,
) -> list[float]:
    """Relative error of each point predicted by a fit to all the others."""
    out = []
    for i, p in enumerate(points):
        rest = [q for j, q in enumerate(points) if j != i]
        m = fit(rest, features, form, max_rates=max_rates)
        out.append((m.predict(p) - p.seconds) / p.seconds)
    return out


def rms(errors: Sequence[float]) -> float:
    return float(np.sqrt(np.mean(np.square(errors))))
