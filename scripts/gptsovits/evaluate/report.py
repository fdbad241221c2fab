"""Per-epoch scores, the recommended epoch, and the printed table / CSV.

Recommendation rule (lower is better for every metric): artefacts veto,
fidelity chooses.
1. Breath tonality: keep the epochs within TONALITY_MARGIN of the lowest one
   (skipped when no clip has a breath window).
2. Whine: of those, keep the epochs within WHINE_MARGIN_DB of their lowest.
3. Of those, the lowest log-mel distance to the recordings; a tie goes to the
   earlier epoch (less fine-tuned).
Both vetoes compare epochs with each other, not with the recordings: a random
or badly recorded voice has artefacts of its own, and the question is which
epoch adds the fewest. Listen to the recommended epoch and its neighbours
before choosing (the reference port found an LLM judge unreliable here,
docs/board.md, parity and evaluation).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Per-clip tonality above which the reference port's table counts a clip as
# buzzing ("clips > 3"); also the veto margin of rule 1, in the same units
# (dB-bins of excess summed over the band).
TONAL_CLIP_FLAG = 3.0
TONALITY_MARGIN = 3.0
# Rule 2: 3 dB is twice the comb line's power over the best epoch.
WHINE_MARGIN_DB = 3.0

RECORDING = "recording"


@dataclass(frozen=True)
class Scores:
    """Mean scores of one epoch (or of the recordings themselves) over the clips."""

    label: str
    epoch: int | None  # None for the recordings
    tonality: float  # NaN when no clip has a breath window
    tonal_clips: int  # clips whose tonality exceeds TONAL_CLIP_FLAG
    breath_clips: int  # clips with at least one usable breath window
    whine: float
    log_mel: float
    seconds: float = 0.0  # time taken

    @classmethod
    def of_clips(
        cls,
        label: str,
        epoch: int | None,
        tonality: Sequence[float],
        whine: Sequence[float],
        log_mel: Sequence[float],
        seconds: float = 0.0,
    ) -> Scores:
        tonal = [t for t in tonality if not math.isnan(t)]
        return cls(
            label=label,
            epoch=epoch,
            tonality=float(np.mean(tonal)) if tonal else math.nan,
            tonal_clips=sum(t > TONAL_CLIP_FLAG for t in tonal),
            breath_clips=len(tonal),
            whine=float(np.mean(whine)),
            log_mel=float(np.mean(log_mel)),
            seconds=seconds,
        )


def _within(rows: list[Scores], key: str, margin: float) -> list[Scores]:
    values = [getattr(r, key) for r in rows]
    if any(math.isnan(v) for v in values):
        return rows
    best = min(values)
    return [r for r, v in zip(rows, values) if v <= best + margin]


def _stages(epochs: Sequence[Scores]) -> tuple[list[Scores], list[Scores]]:
    """The survivors of rule 1, and of rules 1 and 2."""
    if not epochs:
        raise ValueError("no epoch was evaluated")
    quiet = _within(list(epochs), "tonality", TONALITY_MARGIN)
    return quiet, _within(quiet, "whine", WHINE_MARGIN_DB)


def recommend(epochs: Sequence[Scores]) -> Scores:
    """The module docstring's rule; `epochs` must not be empty."""
    _, rows = _stages(epochs)
    return min(rows, key=lambda r: (r.log_mel, r.epoch if r.epoch is not None else 0))


def explain(epochs: Sequence[Scores]) -> str:
    """Which epochs each veto removed, for the line under the table."""
    quiet, rows = _stages(epochs)

    def names(kept: list[Scores], of: Sequence[Scores]) -> str:
        gone = [r.label for r in of if r not in kept]
        return " ".join(gone) or "none"

    return (
        f"vetoed by breath tonality > best + {TONALITY_MARGIN:g}: "
        f"{names(quiet, epochs)}; by whine > best + {WHINE_MARGIN_DB:g} dB: "
        f"{names(rows, quiet)}; chosen: the lowest log-mel distance of the rest"
    )


def _number(value: float, fmt: str) -> str:
    return "n/a" if math.isnan(value) else format(value, fmt)


HEADER = ("epoch", "breath tonality", "clips > 3", "whine dB", "log-mel dist", "")


def table(recording: Scores, epochs: Sequence[Scores], best: Scores | None) -> str:
    """The printed table: the recordings first, then one row per epoch."""
    rows = [HEADER]
    for r in (recording, *epochs):
        rows.append(
            (
                r.label,
                _number(r.tonality, ".2f"),
                f"{r.tonal_clips}/{r.breath_clips}",
                _number(r.whine, ".1f"),
                _number(r.log_mel, ".3f"),
                "<- recommended" if best is not None and r is best else "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    return "\n".join(
        "  ".join(
            v.rjust(w) if 0 < i < len(HEADER) - 1 else v.ljust(w)
            for i, (v, w) in enumerate(zip(row, widths))
        ).rstrip()
        for row in rows
    )


CSV_FIELDS = (
    "label",
    "epoch",
    "tonality",
    "tonal_clips",
    "breath_clips",
    "whine",
    "log_mel",
    "seconds",
)


def write_csv(path: Path, rows: Sequence[Scores]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(CSV_FIELDS)
        for r in rows:
            out.writerow(
                ["" if getattr(r, k) is None else getattr(r, k) for k in CSV_FIELDS]
            )
    return path
