"""One PNG per metric; a metric no epoch has (no breaths) gets none."""

from __future__ import annotations

import math
from pathlib import Path

from scripts.gptsovits.evaluate import plots
from scripts.gptsovits.evaluate.report import RECORDING, Scores


def _rows(tonality: float) -> tuple[Scores, list[Scores]]:
    rec = Scores(RECORDING, None, tonality, 0, 1, 1.0, 0.0)
    return rec, [
        Scores("e2", 2, tonality, 0, 1, 20.0, 1.0),
        Scores("e4", 4, tonality, 0, 1, 10.0, 0.8),
    ]


def test_a_png_per_metric(tmp_path: Path) -> None:
    rec, epochs = _rows(2.0)
    paths = plots.plot_metrics(tmp_path / "plots", rec, epochs, epochs[1])
    assert [p.name for p in paths] == [f"{stem}.png" for _, stem, _ in plots.METRICS]
    for path in paths:
        assert path.read_bytes()[:4] == b"\x89PNG"


def test_no_tonality_plot_without_breaths(tmp_path: Path) -> None:
    rec, epochs = _rows(math.nan)
    paths = plots.plot_metrics(tmp_path, rec, epochs, epochs[0])
    assert [p.name for p in paths] == ["whine.png", "log_mel_distance.png"]
