"""The windows stage: each codec window's left context from the codec's
receptive field (or as given), and the schedule measured on the model's own
codec against upstream's decode (codec_plan.py).  It runs first: a window
whose context cannot be found stops the build before the export (minutes at
full size).  The windows, first_frames and the measured SNR are the params'
``codec`` (the tables stage reads them)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from scripts.common.build.stage import Results
from scripts.qwen3.tts import codec_plan
from scripts.qwen3.tts import windows as codec_windows
from scripts.qwen3.tts.codec_plan import Measured
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.options import CodecPlan, CodecWindow

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Windows:
    """The schedule as measured, and the params' part of it."""

    schedule: Measured
    codec: CodecPlan


def inputs(ctx: BuildContext) -> dict[str, Any]:
    asked = [[w.frames, w.context] for w in ctx.opts.codec_windows]
    return {
        "model": ctx.model_files,
        "windows": asked,
        "first_frames": ctx.opts.first_frames,
    }


def run(ctx: BuildContext, results: Results) -> Windows:
    from scripts.qwen3.tts.upstream import torch_threads

    with torch_threads(1):  # tiny ops: one thread beats a contended pool
        return _measure(ctx)


def _measure(ctx: BuildContext) -> Windows:
    first = ctx.opts.first_frames
    spf, book = ctx.src.codec.decode_upsample_rate, ctx.src.predictor.vocab_size
    chosen = codec_plan.plan(
        ctx.opts.codec_windows, codec_windows.decoder_config(ctx.codec)
    )
    s = codec_plan.measure(ctx.codec, chosen, first, spf, book)
    _LOGGER.info(
        "codec schedule %s, first %d frames (receptive field %d frames): %s, SNR "
        "%.1f dB vs upstream's decode (upstream float32 vs float64: %.1f dB), "
        "%.2f frames computed per frame kept (%.2f steady), first audio %.3f s",
        chosen,
        first,
        s.receptive_field,
        "exact" if s.exact else "APPROXIMATE",
        s.snr_db,
        s.upstream_floor_db,
        s.frames_per_kept,
        s.steady_frames_per_kept,
        s.first_audio_s,
    )
    if not s.exact:
        _LOGGER.warning(
            "the codec schedule's contexts are shorter than the decoder's receptive "
            "field (%d frames): streamed audio differs from upstream's decode "
            "(measured above; the bundle says so)",
            s.receptive_field,
        )
    planned = [CodecWindow(f, c) for f, c in chosen]
    return Windows(s, CodecPlan(planned, first, s.snr_db))


def line(s: Measured) -> str:
    """The schedule as the summary says it."""
    exact = "exact" if s.exact else "APPROXIMATE"
    return (
        f"codec schedule {s.windows} after {s.first_frames} first "
        f"frames: {exact} (receptive field {s.receptive_field} frames), "
        f"SNR {s.snr_db:.1f} dB, log-mel L1 {s.log_mel_l1:.4f} vs "
        f"upstream's decode ({s.codes} codes; upstream float32 vs float64 "
        f"{s.upstream_floor_db:.1f} dB), {s.frames_per_kept:.2f} "
        f"frames computed per frame kept ({s.steady_frames_per_kept:.2f} "
        f"steady), first audio {s.first_audio_s * 1000:.0f} ms (CPU)"
    )
