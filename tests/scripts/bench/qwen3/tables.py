"""What a Qwen3 bench's ``--quick`` run must print: every table's title, a row
per bundle member with its numbers, and the total row."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest


def quick_run(
    main: Callable[[list[str]], int],
    flags: Sequence[str],
    qnn_cache: Path,
    work: Path,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """``main --quick FLAGS`` on the compile cache, returning what it printed
    (after asserting it returned 0)."""
    argv = ["--quick", *flags, "--qnn-cache", str(qnn_cache), "--work", str(work)]
    assert main(argv) == 0
    return capsys.readouterr().out


def assert_tables(
    out: str, titles: Sequence[str], members: Sequence[str], columns: int
) -> None:
    """Every title printed; each member a row of (at least) two numbers, and
    a total row of ``columns`` numbers."""
    for title in titles:
        assert title in out
    for member in members:
        assert re.search(rf"^{re.escape(member)}\s+[\d,]+\s+[\d,]+", out, re.M)
    numbers = r"\s+[\d,]+" * columns
    assert re.search(rf"^total{numbers}$", out, re.M)
