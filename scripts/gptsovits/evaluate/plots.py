"""One PNG per metric: the epochs' scores, the recordings' own level dashed,
the recommended epoch marked. matplotlib's object API (no pyplot), so nothing
needs a display or changes global backend state."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from scripts.gptsovits.evaluate.report import Scores

# (Scores attribute, file stem, axis label); the recordings' log-mel distance
# to themselves is 0 and not drawn.
METRICS = (
    ("tonality", "breath_tonality", "breath tonality (summed dB excess)"),
    ("whine", "whine", "whine (dB over the running median)"),
    ("log_mel", "log_mel_distance", "log-mel distance to the recording"),
)
FIGSIZE = (6.4, 4.0)  # inches; 640 x 400 px at DPI
DPI = 100
RECORDING_LABEL = "the recordings"


def plot_metrics(
    out: Path, recording: Scores, epochs: Sequence[Scores], best: Scores
) -> list[Path]:
    """Write the plots into `out`; returns their paths (a metric every epoch
    lacks, e.g. tonality without breaths, gets no plot)."""
    from matplotlib.figure import Figure

    out.mkdir(parents=True, exist_ok=True)
    x = list(range(len(epochs)))
    paths = []
    for key, stem, ylabel in METRICS:
        y = [getattr(e, key) for e in epochs]
        if all(math.isnan(v) for v in y):
            continue
        fig = Figure(figsize=FIGSIZE, dpi=DPI)
        ax = fig.add_subplot()
        ax.plot(x, y, marker="o", label="epochs")
        ref = getattr(recording, key)
        if key != "log_mel" and not math.isnan(ref):
            ax.axhline(ref, linestyle="--", color="gray", label=RECORDING_LABEL)
        i = list(epochs).index(best)
        if not math.isnan(y[i]):
            ax.plot(
                [x[i]],
                [y[i]],
                marker="*",
                markersize=16,
                linestyle="none",
                color="tab:red",
                label=f"recommended ({best.label})",
            )
        ax.set_xticks(x, [e.label for e in epochs])
        ax.set_xlabel("SoVITS epoch")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{stem.replace('_', ' ')} (lower is better)")
        ax.legend()
        ax.grid(alpha=0.3)
        path = out / f"{stem}.png"
        fig.savefig(path)
        paths.append(path)
    return paths
