"""The summary's stage table: one row per stage run or resumed, none for a
group (its stages have theirs)."""

from __future__ import annotations

from scripts.common.build.report import STAGE_HEADER, stage_rows
from scripts.common.build.run import StageRun


def test_a_group_has_no_row_of_its_own_and_resumed_stages_say_so() -> None:
    run = StageRun(
        results={"export": 1, "compile a": 2, "compile": {"compile a": 2}, "x": 3},
        ran=["export", "compile a"],
        skipped=["x"],
        seconds={"export": 1.25, "compile a": 2.0, "x": 0.0},
    )
    assert stage_rows(run) == [
        STAGE_HEADER,
        ("export", "ran", "1.2"),
        ("compile a", "ran", "2.0"),
        ("x", "resumed", "-"),
    ]
