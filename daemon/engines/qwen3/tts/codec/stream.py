"""Codec frames in as the talker makes them, 24 kHz audio out per window.

Upstream decodes a finished utterance with ``chunked_decode(chunk_size=300,
left_context_size=25)`` (modeling_qwen3_tts_tokenizer_v2.py): the first chunk
has no context; every later chunk decodes ``[start - ctx, end)``, with ``ctx =
min(25, start)``, and drops the context's samples; positions and the sliding
window restart in every call.  The codec is causal (right receptive field 0),
so a window ending inside an upstream chunk equals upstream's samples there
when its left context reaches back ``min(R, start - origin)`` frames: R the
decoder's left receptive field (scripts/common/receptive_field.py
``qwen3_codec_field``), origin where upstream's call for that chunk starts.
A streaming schedule is that procedure with smaller windows, so the first
audio leaves after ``codec.first_frames`` frames:

- window 0: frames ``[0, first_frames)``, no context, in the smallest
  ``codec_<T>`` with T >= first_frames (right-padded: the codec is causal);
- window i >= 1: ``codec.windows[min(i - 1, last)]`` = {frames: T, context: C}
  decodes ``min(C, start - origin)`` context frames and fills the rest of the
  graph with new frames, never past the end of upstream's chunk (so a bundle
  may ramp from small early windows to larger ones, and C >= R is exact);
- at :meth:`CodecStream.finish` the partial last window runs right-padded.

The ``"upstream"`` schedule is chunked_decode itself (chunk_frames /
left_context from params, in graph ``codec_<chunk + context>``); :func:`whole`
is the schedule of an utterance whose frames are all known (a request that is
not streamed): upstream's chunking in the bundle's largest graph, each window
in the smallest graph that holds it, exact for every length when that graph
holds a chunk and its context, else for the first ``exact_frames``.  Overlap-and-
crop windows (daemon/sdk/audio/windows.py, Piper and GPT-SoVITS) do not fit
here: they need frames on both sides of what they keep, while this codec is
causal and only needs the past.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Literal

import numpy as np

if TYPE_CHECKING:
    from daemon.engines.qwen3.tts.codec.decoder import CodecDecoder
    from daemon.engines.qwen3.tts.params import TtsParams
    from daemon.engines.qwen3.tts.sizes import CodecParams
    from daemon.sdk.cancel import CancelToken

ScheduleName = Literal["streaming", "upstream"]
#: a whole utterance's window past what its largest graph decodes exactly
#: keeps this share of its frames new (the build's rule for a context it
#: measures, scripts/qwen3/tts/windows.py MIN_NEW_SHARE): more context costs
#: a graph call per few frames
WHOLE_MIN_NEW_SHARE: Final = 0.25


@dataclass(frozen=True)
class Window:
    """One codec call: frames [start - context, stop) into ``codec_<graph>``,
    the samples of [start, stop) kept."""

    start: int
    stop: int
    context: int
    graph: int


@dataclass(frozen=True)
class Schedule:
    """Window 0 holds ``first`` frames (no context) in ``codec_<first_graph>``;
    window i >= 1 follows ``steady[min(i - 1, last)]`` as (graph T, context
    cap C).  Windows never cross upstream's chunks of ``chunk`` frames, whose
    calls start ``left`` frames before them (``origin``).  With ``fit``, each
    window runs in the smallest of those graphs that holds its frames instead
    (the codec is causal: right padding changes none of them)."""

    first: int
    first_graph: int
    steady: tuple[tuple[int, int], ...]
    chunk: int
    left: int
    fit: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not 0 < self.first <= min(self.first_graph, self.chunk):
            raise ValueError(
                f"codec schedule: first window of {self.first} frames in "
                f"codec_{self.first_graph} (upstream chunks of {self.chunk})"
            )
        if not self.steady or any(c >= t or c < 0 for t, c in self.steady):
            raise ValueError(f"codec schedule: bad windows {self.steady}")
        own = {self.first_graph, *(t for t, _ in self.steady)}
        if self.fit and max(self.fit) < max(own):
            raise ValueError(f"codec schedule: graphs {self.fit} hold no window "
                             f"of {max(own)} frames")  # fmt: skip

    def origin(self, start: int) -> int:
        """Where upstream's call decoding frame ``start`` begins (its chunk's
        start less its left context; chunked_decode's rule)."""
        begin = start - start % self.chunk
        return begin - (self.left if begin - self.left > 0 else begin)

    def window(self, index: int, start: int, available: int) -> Window:
        """Window ``index`` starting at frame ``start``, cut at ``available``."""
        if index == 0:
            w = Window(0, min(self.first, available), 0, self.first_graph)
        else:
            graph, cap = self.steady[min(index - 1, len(self.steady) - 1)]
            context = min(cap, start - self.origin(start))
            chunk_end = start - start % self.chunk + self.chunk
            stop = min(start + graph - context, available, chunk_end)
            w = Window(start, stop, context, graph)
        if not self.fit:
            return w
        held = w.stop - w.start + w.context
        return replace(w, graph=min(t for t in self.fit if t >= held))

    def full(self, index: int, start: int) -> int:
        """The stop of window ``index`` when all of its new frames are there."""
        return self.window(index, start, 1 << 62).stop

    def graphs(self) -> set[int]:
        return {self.first_graph, *(t for t, _ in self.steady), *self.fit}

    def plan(self, n: int) -> list[Window]:
        """Every window of an ``n``-frame utterance."""
        out: list[Window] = []
        while not out or out[-1].stop < n:
            out.append(self.window(len(out), out[-1].stop if out else 0, n))
        return out


def schedule_of_windows(
    first_frames: int, windows: Sequence[tuple[int, int]], chunk: int, left: int
) -> Schedule:
    """A streaming schedule: the first window in the smallest graph holding it."""
    first_graph = next(t for t in sorted(f for f, _ in windows) if t >= first_frames)
    return Schedule(first_frames, first_graph, tuple(windows), chunk, left)


def streaming(c: CodecParams) -> Schedule:
    """The bundle's streaming schedule (params.codec.windows / first_frames)."""
    steady = [(w.frames, w.context) for w in c.windows]
    return schedule_of_windows(c.first_frames, steady, c.chunk_frames, c.left_context)


def upstream(c: CodecParams) -> Schedule:
    """upstream ``chunked_decode(chunk_frames, left_context)``."""
    graph = c.chunk_frames + c.left_context
    return Schedule(
        c.chunk_frames, graph, ((graph, c.left_context),), c.chunk_frames,
        c.left_context,
    )  # fmt: skip


def whole(c: CodecParams, sizes: Sequence[int]) -> Schedule:
    """An utterance whose frames are all known, in graphs of ``sizes``: the
    first min(T, chunk) frames in one call, T the largest; then, where T
    holds a chunk and its context, upstream's own call per chunk, else
    windows of T frames keeping WHOLE_MIN_NEW_SHARE of them new."""
    t = max(sizes)
    if exact_frames(c, sizes) is None:
        context = c.left_context
    else:
        context = t - max(1, math.ceil(WHOLE_MIN_NEW_SHARE * t))
    first = min(t, c.chunk_frames)
    return Schedule(first, t, ((t, context),), c.chunk_frames, c.left_context,
                    tuple(sorted(set(sizes))))  # fmt: skip


def exact_frames(c: CodecParams, sizes: Sequence[int]) -> int | None:
    """Utterances of at most this many frames :func:`whole` decodes as
    upstream does (every window upstream's call, or its start); None: any."""
    t = max(sizes)
    return None if t >= c.chunk_frames + c.left_context else min(t, c.chunk_frames)


def schedule_of(c: CodecParams, name: ScheduleName | Schedule) -> Schedule:
    if isinstance(name, Schedule):
        return name
    if name == "streaming":
        return streaming(c)
    if name == "upstream":
        return upstream(c)
    raise ValueError(f"codec schedule {name!r}: expected 'streaming' or 'upstream'")


class CodecStream:
    """One utterance: frames [G] pushed one by one (or [n, G] at once); each
    :meth:`push` returns the float32 chunks whose windows are now complete,
    :meth:`finish` the rest.  Together: ``samples_per_frame * frames`` samples."""

    def __init__(
        self,
        p: TtsParams,
        decoder: CodecDecoder,
        schedule: ScheduleName | Schedule = "streaming",
        cancel: CancelToken | None = None,
    ) -> None:
        self.decoder = decoder
        self.schedule = schedule_of(p.codec, schedule)
        for t in sorted(self.schedule.graphs()):
            decoder.require(t)
        self.cancel = cancel
        self.groups = decoder.groups
        self._codes = np.zeros((256, self.groups), np.int64)
        self.frames = 0  # pushed so far
        self.decoded = 0  # frames whose samples left
        self.windows = 0  # codec calls made
        self.finished = False

    @property
    def samples(self) -> int:
        return self.decoded * self.decoder.samples_per_frame

    def push(self, frame: np.ndarray | Sequence[int]) -> list[np.ndarray]:
        if self.finished:
            raise RuntimeError("codec stream: push after finish")
        rows = np.asarray(frame)
        if rows.ndim not in (1, 2) or rows.shape[-1] != self.groups:
            raise ValueError(
                f"codec stream: a frame is [{self.groups}] codes (or [n, "
                f"{self.groups}]), got {list(rows.shape)}"
            )
        rows = rows.reshape(-1, self.groups)
        need = self.frames + len(rows)
        if need > len(self._codes):
            grown = np.zeros((max(need, 2 * len(self._codes)), self.groups), np.int64)
            grown[: self.frames] = self._codes[: self.frames]
            self._codes = grown
        self._codes[self.frames : need] = rows
        self.frames = need
        out = []
        while self.schedule.full(self.windows, self.decoded) <= self.frames:
            out.append(self._run())
        return out

    def finish(self) -> list[np.ndarray]:
        """The partial last window (if frames are left), right-padded."""
        if self.finished:
            return []
        out = [self._run()] if self.decoded < self.frames else []
        self.finished = True
        return out

    def _run(self) -> np.ndarray:
        if self.cancel is not None:
            self.cancel.check()
        w = self.schedule.window(self.windows, self.decoded, self.frames)
        audio = self.decoder.decode(self._codes[w.start - w.context : w.stop], w.graph)
        self.windows += 1
        self.decoded = w.stop
        return audio[w.context * self.decoder.samples_per_frame :]


def decode(
    p: TtsParams,
    decoder: CodecDecoder,
    codes: np.ndarray,
    schedule: ScheduleName | Schedule = "upstream",
    cancel: CancelToken | None = None,
) -> np.ndarray:
    """float32 audio of a whole utterance's codes [n, G] (parity tests, gates)."""
    stream = CodecStream(p, decoder, schedule, cancel)
    chunks = stream.push(codes) + stream.finish()
    if not chunks:
        return np.zeros(0, np.float32)
    return np.concatenate(chunks)
