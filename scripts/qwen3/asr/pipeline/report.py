"""build_asr's summary table: one row per graph (bucket, binary size, compile
time, its CPU and simulator gates, simulator seconds per call); the layout is
shared with the other Qwen3 builds (scripts/qwen3/common/table.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scripts.qwen3.common import table
from scripts.qwen3.common.table import HEADER

#: short names of the gates' metrics in the table (the shared ones)
_SHORT: Final = table.SHORT


def rows(results: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The table's rows (header first) from the build's step results."""
    return table.rows(results, _SHORT)


def summary(results: Mapping[str, Any]) -> str:
    """The table as aligned text, plus a total line."""
    return table.summary(results, _SHORT)


__all__ = ["HEADER", "rows", "summary"]
