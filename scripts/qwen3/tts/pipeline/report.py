"""build_tts_qwen3's summary: the graph table (shared layout:
scripts/qwen3/common/table.py), then the codec schedule measured
(its contexts against the decoder's receptive field, SNR and log-mel L1
against upstream's decode, frames computed per frame kept, first audio) and
the CPU tables' dtype."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scripts.qwen3.common import table
from scripts.qwen3.common.table import HEADER

#: short names of the gates' metrics: the fp16 argmax before the fp32 one and
#: the codec's SNR in upstream's chunking before the plain one (the more
#: specific first), then the shared ones; a codec window's fp16 range share
#: and its simulator SNR (graphs/codec_sim.py)
_SHORT: Final = (
    ("teacher-forced argmax agreement vs float64 (fp16 K/V)", "argmax16", ".3g"),
    *table.SHORT,
    ("SNR dB vs float64 decode", "SNRup", ".1f"),
    ("SNR dB", "SNR", ".1f"),
    ("fp16 range share", "fp16", ".2g"),
    ("simulator SNR dB", "simSNR", ".1f"),
)


def schedule_line(sched: Mapping[str, Any]) -> str:
    exact = "exact" if sched["exact"] else "APPROXIMATE"
    return (
        f"codec schedule {sched['windows']} after {sched['first_frames']} first "
        f"frames: {exact} (receptive field {sched['receptive_field']} frames), "
        f"SNR {sched['snr_db']:.1f} dB, log-mel L1 {sched['log_mel_l1']:.4f} vs "
        f"upstream's decode ({sched['codes']} codes; upstream float32 vs float64 "
        f"{sched['upstream_floor_db']:.1f} dB), {sched['frames_per_kept']:.2f} "
        f"frames computed per frame kept ({sched['steady_frames_per_kept']:.2f} "
        f"steady), first audio {sched['first_audio_s'] * 1000:.0f} ms (CPU)"
    )


def summary(results: Mapping[str, Any]) -> str:
    """The graph table and the schedule, as text."""
    lines = [table.summary(results, _SHORT)]
    sched = results.get("windows", {}).get("schedule")
    if sched:
        lines += ["", schedule_line(sched)]
    tables = results.get("tables", {})
    if tables:
        lines.append(f"cpu tables: {tables.get('embedding_dtype')}")
    return "\n".join(lines)


__all__ = ["HEADER", "summary"]
