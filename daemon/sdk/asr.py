"""The ``AsrEngine`` protocol every speech-to-text engine implements: a session.

``engine.open(options, cancel)`` starts one utterance stream; the caller then
``feed``s float32 PCM as it arrives, as often as it likes, and calls ``finish``
once at the end.  ``feed`` takes ``[n]`` (mono) or ``[n, channels]``
(interleaved frames) at any positive rate; rate and channels stay fixed for a
session, and the engine normalises them itself (e.g. downmix, resample).

``feed`` and ``finish`` return an *iterable* of transcripts: partials
(``final=False``, the open stretch so far; its text only grows, a partial is
never retracted) and finals (``final=True``, a stretch settled for good).  The
transcript of the whole stream is the finals' texts in order.  A list is fine;
a generator streams: the host takes one item at a time, hands it to the client
as it is yielded, and may run other work (another request's graph calls) on
the NPU between two items.  The host drains each returned iterable before the
next ``feed``/``finish``, or closes it (``generator.close()``) when the session
is cancelled, and calls ``close`` at the end either way.

The session checks its cancel token between any two graph calls
(``Cancelled``).  Like every engine it is a plain synchronous object: the host
calls it on its NPU worker thread only, and keeps at most one session per
engine open at a time, so a session may keep state bound to its engine's graphs
(a KV cache).  Other engines' requests may run between two calls (or items).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

import numpy as np

from daemon.sdk.cancel import CancelToken
from daemon.sdk.registry import Engine


class SessionFinished(RuntimeError):
    """``feed`` or ``finish`` after ``finish`` (or ``close``): the stream ended."""


@dataclass(frozen=True)
class TranscriptionOptions:
    """Per-session options; engine-specific knobs travel in ``extra``."""

    #: model (voice) name of a bundle offering several; None for the default
    voice: str | None = None
    #: language spoken, if the client knows it; None lets the engine decide
    language: str | None = None
    #: text that steers the transcript (names, spelling), for engines that take one
    prompt: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Transcript:
    """Text heard between ``start_s`` and ``end_s`` of the stream (seconds)."""

    text: str
    final: bool
    start_s: float
    end_s: float
    language: str | None = None


def pcm_problem(pcm: object, sample_rate: object) -> str | None:
    """Why ``pcm``/``sample_rate`` is no valid ``feed`` input, or None.

    ``feed`` takes float32 samples, nominally in [-1, 1]: ``[n]`` (mono) or
    ``[n, channels]`` (frames of interleaved channels), at a positive integer
    rate.  Checked once, where audio enters the service (which also bounds
    channels and rate, ``daemon.service.edge.requests``).
    """
    if not isinstance(pcm, np.ndarray):
        return f"pcm must be a numpy array, got {type(pcm).__name__}"
    shaped = pcm.ndim == 1 or (pcm.ndim == 2 and pcm.shape[1] >= 1)
    if pcm.dtype != np.float32 or not shaped:
        return (
            "pcm must be float32 [n] or [n, channels], "
            f"got {pcm.dtype} {list(pcm.shape)}"
        )
    if not np.isfinite(pcm).all():
        return "pcm holds NaN or infinite samples"
    if (
        not isinstance(sample_rate, int)
        or isinstance(sample_rate, bool)
        or sample_rate <= 0
    ):
        return f"sample_rate must be a positive integer, got {sample_rate!r}"
    return None


def channels_of(pcm: np.ndarray) -> int:
    """Channels of ``feed`` input: 1 for ``[n]``, else ``pcm.shape[1]``."""
    return 1 if pcm.ndim == 1 else int(pcm.shape[1])


#: numpy's pairwise summation unrolls blocks of 8 (numpy/_core/src/umath/loops_utils.h)
_PAIRWISE_MIN: Final = 8


def downmix(pcm: np.ndarray) -> np.ndarray:
    """``feed`` input as mono float32 ``[n]``: the mean of its channels (as
    qwen-asr's ``to_mono`` and most ASR front ends do)."""
    if pcm.ndim == 1:
        return pcm
    c = pcm.shape[1]
    if c > _PAIRWISE_MIN:
        return np.mean(pcm, axis=-1).astype(np.float32)
    # np.mean over a short last axis, without its strided reduction (10 ms for
    # 10 s of 44.1 kHz stereo; column adds take 0.4 ms): the same float32 sums
    # in the same order, so bit-identical (test_asr.py checks 1..8 channels).
    cols = [pcm[:, i] for i in range(c)]
    if c == _PAIRWISE_MIN:  # numpy's pairwise sum of eight: a balanced tree
        acc = ((cols[0] + cols[1]) + (cols[2] + cols[3])) + (
            (cols[4] + cols[5]) + (cols[6] + cols[7])
        )
    else:
        acc = cols[0].copy()
        for col in cols[1:]:
            acc += col
    return (acc / np.float32(c)).astype(np.float32, copy=False)


def stream_text(transcripts: Iterable[Transcript]) -> str:
    """The text of a whole stream: its finals' texts joined as they are (as
    qwen-asr joins the texts of the chunks it cut an utterance into)."""
    return "".join(t.text for t in transcripts if t.final)


@runtime_checkable
class AsrSession(Protocol):
    """One open utterance stream of an :class:`AsrEngine`."""

    def feed(self, pcm: np.ndarray, sample_rate: int) -> Iterable[Transcript]:
        """Take the next samples (float32 ``[n]`` or ``[n, channels]``); return
        what became ready (``SessionFinished`` after ``finish``; ``Cancelled``
        when the token fired; ``ValueError`` if rate or channels changed)."""

    def finish(self) -> Iterable[Transcript]:
        """End of input: the last transcripts, every open one final."""

    def close(self) -> None:
        """Free the session's state (idempotent; also after a failure)."""


@runtime_checkable
class AsrEngine(Engine, Protocol):
    """A speech-to-text engine."""

    task: Literal["asr"]

    def open(
        self, options: TranscriptionOptions, cancel: CancelToken | None = None
    ) -> AsrSession:
        """A new session (ValueError for options this engine refuses)."""
