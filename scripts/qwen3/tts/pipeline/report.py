"""build_tts_qwen3's summary: the graph table (shared layout:
scripts/qwen3/pipeline_common/table.py), then the codec windows measured
(window frames, left context, SNR and log-mel L1 against upstream's decode;
the chosen schedule) and the CPU tables' dtype."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scripts.qwen3.pipeline_common import table
from scripts.qwen3.pipeline_common.table import HEADER

#: short names of the gates' metrics: the shared ones and the codec's SNR
#: (in upstream's chunking first: the more specific)
_SHORT: Final = (
    *table.SHORT,
    ("SNR dB in upstream", "SNRup", ".1f"),
    ("SNR dB", "SNR", ".1f"),
)
WINDOW_HEADER: Final = ("codec window", "context", "codes", "SNR dB", "log-mel L1",
                        "chosen")  # fmt: skip


def window_rows(results: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The measured (frames, context) rows, header first."""
    win = results.get("windows", {})
    chosen = {(w["frames"], w["context"])
              for w in win.get("codec", {}).get("windows", [])}  # fmt: skip
    out = [WINDOW_HEADER]
    for r in win.get("rows", []):
        mark = "yes" if (r["frames"], r["context"]) in chosen else ""
        if r.get("given"):
            mark = f"{mark} (given)".strip()
        out.append((str(r["frames"]), str(r["context"]), str(r["codes"]),
                    f"{r['snr_db']:.1f}", f"{r['log_mel_l1']:.4f}", mark))  # fmt: skip
    return out


def summary(results: Mapping[str, Any]) -> str:
    """The graph table, the windows table and the schedule, as text."""
    lines = [table.summary(results, _SHORT)]
    win = results.get("windows", {})
    if win.get("rows"):
        lines += ["", *table.aligned(window_rows(results))]
    sched = win.get("schedule")
    if sched:
        lines.append(
            f"codec schedule {sched['windows']} after {sched['first_frames']} first "
            f"frames: SNR {sched['snr_db']:.1f} dB, log-mel L1 "
            f"{sched['log_mel_l1']:.4f} vs upstream's decode ({sched['codes']} codes)"
        )
    tables = results.get("tables", {})
    if tables:
        lines.append(f"cpu tables: {tables.get('embedding_dtype')}")
    return "\n".join(lines)


__all__ = ["HEADER", "summary", "window_rows"]
