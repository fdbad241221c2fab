"""The codec's streaming schedule: left contexts from the decoder's receptive
field, and what a schedule costs and how close it comes to upstream's decode.

The decoder is causal (right receptive field 0) and its left receptive field R
follows from its config (scripts/common/receptive_field.py
``qwen3_codec_field``: 154 frames for the tiny codec, 580 for
Qwen3-TTS-Tokenizer-12Hz, whose 8 layers x 71 frames of sliding window make
most of it).  A window starting at frame s equals upstream's ``decode`` there
when its left context reaches back ``min(R, s - origin)``: origin is where
upstream's own call for that chunk starts (stream.Schedule.origin), as no
frame before it ever reached upstream's samples.  So a window of T frames
whose context is not given gets ``min(R, chunk + left - 1)`` (the furthest
upstream's call reaches back), capped so a call keeps MIN_NEW_SHARE of its
frames new; the schedule is exact when every window's context meets that need.

``measure`` reports per schedule (``Measured``): ``exact`` (the rule above, over
UPSTREAM_GATE_FRAMES frames), ``frames_per_kept`` (graph frames computed per
frame of audio kept: an NPU call costs its graph's frames, padding included),
``first_audio_s`` (one call of the first window's graph, upstream's torch
decoder on this CPU), and SNR / log-mel L1 against upstream's ``decode``
(float32) with upstream float32's own SNR to float64 beside it (the floor).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from scripts.common.receptive_field import qwen3_codec_context
from scripts.qwen3.tts import windows as w

#: timed calls of the first window (the fastest counts: a shared CPU is noisy)
TIMED_CALLS: Final = 3
#: a window asked for: (frames, context); context None: the needed one
Asked = tuple[int, int | None]


@dataclass(frozen=True)
class Measured:
    """One schedule as the engine runs it, measured over ``codes`` frames."""

    windows: list[list[int]]  # [frames, context] per window
    first_frames: int
    codes: int
    receptive_field: int  # frames (scripts/common/receptive_field.py)
    exact: bool  # every context meets the need: upstream's decode
    frames_per_kept: float
    steady_frames_per_kept: float
    first_audio_s: float  # one call of the first window's graph, on this CPU
    snr_db: float  # vs upstream's decode (float32)
    log_mel_l1: float
    upstream_floor_db: float  # upstream float32 vs float64, the floor


def needed_context(config: Any) -> int:
    """Left context that makes any window exact: R, or as far back as
    upstream's own call reaches (chunk + left - 1 frames) when R is longer."""
    return min(qwen3_codec_context(config), w.UPSTREAM_CHUNK + w.UPSTREAM_CONTEXT - 1)


def plan(asked: Sequence[Asked], config: Any) -> list[tuple[int, int]]:
    """(frames, context) per window asked: a given context kept, else the
    needed one capped at MIN_NEW_SHARE new frames per call."""
    need = needed_context(config)
    out = []
    for frames, context in asked:
        cap = frames - max(1, math.ceil(w.MIN_NEW_SHARE * frames))
        out.append((frames, context if context is not None else min(need, cap)))
    return out


def exact(
    windows: Sequence[tuple[int, int]],
    first_frames: int,
    need: int,
    n: int = w.UPSTREAM_GATE_FRAMES,
) -> bool:
    """Every window's context reaches min(need, start - origin)."""
    s = w.engine_schedule(windows, first_frames)
    return all(x.context >= min(need, x.start - s.origin(x.start)) for x in s.plan(n))


def frames_per_kept(
    windows: Sequence[tuple[int, int]], first_frames: int, n: int
) -> float:
    calls = w.engine_schedule(windows, first_frames).plan(n)
    return round(sum(x.graph for x in calls) / n, 3)


def measure(
    codec: Any,
    windows: Sequence[tuple[int, int]],
    first_frames: int,
    samples_per_frame: int,
    codebook: int,
) -> Measured:
    """The schedule as the engine runs it, through upstream's torch decoder."""
    n = w.UPSTREAM_GATE_FRAMES
    codes = w.test_codes(codebook, n)
    dec = w.torch_decoder(codec)
    got = w.stream_decode(dec, codes, windows, first_frames, samples_per_frame)
    ref = w.upstream_decode(codec, codes)
    ref64 = w.upstream_decode(codec, codes, float64=True)
    first = w.engine_schedule(windows, first_frames).first_graph
    seconds = []
    for _ in range(TIMED_CALLS):
        t0 = time.perf_counter()
        dec(codes[:, :first])
        seconds.append(time.perf_counter() - t0)
    floor = w.score(ref64, ref)["snr_db"]
    need = needed_context(w.decoder_config(codec))
    return Measured(
        windows=[list(x) for x in windows],
        first_frames=first_frames,
        codes=n,
        receptive_field=qwen3_codec_context(w.decoder_config(codec)),
        exact=exact(windows, first_frames, need),
        frames_per_kept=frames_per_kept(windows, first_frames, n),
        steady_frames_per_kept=_steady(windows, first_frames),
        first_audio_s=round(min(seconds), 4),
        **w.score(ref, got),
        upstream_floor_db=floor,
    )


def _steady(windows: Sequence[tuple[int, int]], first_frames: int) -> float:
    """frames_per_kept over ten upstream chunks (the ramp amortised)."""
    n = 10 * w.UPSTREAM_CHUNK
    return frames_per_kept(windows, first_frames, n)
