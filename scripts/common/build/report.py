"""The one summary table a build prints: its stages (ran or resumed, and how
long each took), and any per-graph rows the build adds, as aligned text."""

from __future__ import annotations

from collections.abc import Sequence

from scripts.common.build.run import StageRun

STAGE_HEADER = ("stage", "status", "seconds")


def aligned(table: Sequence[Sequence[str]]) -> list[str]:
    """Rows (header first) as left-aligned columns."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in table]


def stage_rows(run: StageRun) -> list[tuple[str, str, str]]:
    """One row per stage that was part of the run, in order (a group's
    stages have theirs; the group's results are theirs too)."""
    rows = [STAGE_HEADER]
    for name in run.results:
        if name not in run.ran and name not in run.skipped:
            continue  # a group
        status = "resumed" if name in run.skipped else "ran"
        seconds = run.seconds.get(name, 0.0)
        rows.append((name, status, f"{seconds:.1f}" if status == "ran" else "-"))
    return rows


def summary(run: StageRun, graphs: Sequence[Sequence[str]] = ()) -> str:
    """The stage table, then the build's own per-graph table (header first)
    when it gives one."""
    lines = aligned(stage_rows(run))
    if graphs:
        lines += ["", *aligned(graphs)]
    lines.append(
        f"{len(run.ran)} stage(s) ran, {len(run.skipped)} resumed, "
        f"{sum(run.seconds.values()):.1f} s"
    )
    return "\n".join(lines)
