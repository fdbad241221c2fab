"""The recommendation rule and the table / CSV on hand-made scores."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from scripts.gptsovits.evaluate import report
from scripts.gptsovits.evaluate.report import (
    RECORDING,
    Scores,
    explain,
    recommend,
    table,
)

NAN = math.nan


def _s(epoch: int, tonality: float, whine: float, log_mel: float) -> Scores:
    return Scores(f"e{epoch}", epoch, tonality, 0, 1, whine, log_mel)


def test_lowest_log_mel_wins_when_no_artefact_vetoes() -> None:
    rows = [_s(2, 1.0, 5.0, 0.9), _s(4, 2.0, 6.0, 0.7), _s(6, 1.5, 5.5, 0.8)]
    assert recommend(rows).label == "e4"
    assert "tonality > best + 3: none" in explain(rows)


def test_buzzing_breaths_veto_the_closest_epoch() -> None:
    # e8 fits the recordings best but buzzes on breaths (tonality 1 + 3.5).
    rows = [_s(4, 1.0, 5.0, 0.9), _s(8, 4.5, 5.0, 0.5)]
    assert recommend(rows).label == "e4"
    assert "tonality > best + 3: e8;" in explain(rows)


def test_whine_veto_applies_to_the_tonality_survivors() -> None:
    # e2's whine is lowest but e2 is vetoed for tonality first, so e4's whine
    # is the best among the survivors and e6 (within 3 dB of it) stays.
    rows = [_s(2, 9.0, 0.0, 0.1), _s(4, 1.0, 10.0, 0.9), _s(6, 1.0, 12.5, 0.8)]
    assert recommend(rows).label == "e6"
    rows.append(_s(8, 1.0, 13.5, 0.2))  # 3.5 dB over e4: vetoed
    assert recommend(rows).label == "e6"
    assert "by whine > best + 3 dB: e8;" in explain(rows)


def test_tie_goes_to_the_earlier_epoch() -> None:
    rows = [_s(6, 1.0, 1.0, 0.5), _s(4, 1.0, 1.0, 0.5)]
    assert recommend(rows).label == "e4"


def test_no_breath_anywhere_skips_the_tonality_veto() -> None:
    rows = [_s(2, NAN, 1.0, 0.9), _s(4, NAN, 1.5, 0.4)]
    assert recommend(rows).label == "e4"


def test_recommend_needs_an_epoch() -> None:
    with pytest.raises(ValueError, match="no epoch"):
        recommend([])


def test_scores_of_clips_ignore_clips_without_breaths() -> None:
    s = Scores.of_clips("e2", 2, [NAN, 2.0, 4.0], [1.0, 2.0, 3.0], [0.5] * 3)
    assert s.tonality == 3.0 and s.breath_clips == 2
    assert s.tonal_clips == 1  # only 4.0 exceeds the per-clip flag of 3
    assert s.whine == 2.0 and s.log_mel == 0.5
    none = Scores.of_clips("e2", 2, [NAN], [1.0], [0.5])
    assert math.isnan(none.tonality) and none.breath_clips == 0


def test_table_marks_the_recommended_row() -> None:
    rec = Scores(RECORDING, None, NAN, 0, 0, 1.8, 0.0)
    rows = [_s(2, 1.0, 5.0, 0.9), _s(4, 2.0, 6.0, 0.7)]
    text = table(rec, rows, rows[1]).splitlines()
    assert text[0].split()[:2] == ["epoch", "breath"]
    assert text[1].split() == [RECORDING, "n/a", "0/0", "1.8", "0.000"]
    assert text[2].split() == ["e2", "1.00", "0/1", "5.0", "0.900"]
    assert text[3].endswith("<- recommended") and text[3].startswith("e4")
    # Number columns are right-aligned under their headers.
    assert len({len(line.split("  <-")[0].rstrip()) for line in text}) == 1


def test_csv_round_trip(tmp_path: Path) -> None:
    rows = [Scores(RECORDING, None, 0.5, 0, 1, 1.8, 0.0), _s(2, 1.0, 5.0, 0.9)]
    path = report.write_csv(tmp_path / "sub" / "scores.csv", rows)
    with open(path, encoding="utf-8") as f:
        got = list(csv.DictReader(f))
    assert [r["label"] for r in got] == [RECORDING, "e2"]
    assert got[0]["epoch"] == "" and got[1]["epoch"] == "2"
    assert float(got[1]["log_mel"]) == 0.9
