"""The ``AsrEngine`` protocol every speech-to-text engine implements: a session.

``engine.open(options, cancel)`` starts one utterance stream; the caller then
``feed``s mono float32 PCM as it arrives, as often as it likes, and calls
``finish`` once at the end.  Each call returns the transcripts it made ready:
partials (``final=False``, the open stretch so far, may still change) and finals
(``final=True``, a stretch settled for good).  The transcript of the whole
stream is the finals' texts in order.  The session checks its cancel token
between any two graph calls (``Cancelled``).  Like every engine it is a plain
synchronous object: the host calls it on its NPU worker thread only, and runs
one session from ``open`` to ``finish`` with nothing else on the NPU meanwhile,
so a session may keep state bound to its engine's graphs (a KV cache).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from daemon.engine.cancel import CancelToken
from daemon.engine.registry import Engine


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

    ``feed`` takes one-dimensional float32 samples (mono, nominally in
    [-1, 1]) at a positive integer rate.  Checked once, where audio enters
    the service.
    """
    if not isinstance(pcm, np.ndarray):
        return f"pcm must be a numpy array, got {type(pcm).__name__}"
    if pcm.dtype != np.float32 or pcm.ndim != 1:
        return f"pcm must be mono float32 (1-D), got {pcm.dtype} {list(pcm.shape)}"
    if not np.isfinite(pcm).all():
        return "pcm holds NaN or infinite samples"
    if (
        not isinstance(sample_rate, int)
        or isinstance(sample_rate, bool)
        or sample_rate <= 0
    ):
        return f"sample_rate must be a positive integer, got {sample_rate!r}"
    return None


@runtime_checkable
class AsrSession(Protocol):
    """One open utterance stream of an :class:`AsrEngine`."""

    def feed(self, pcm: np.ndarray, sample_rate: int) -> list[Transcript]:
        """Take the next samples; return what became ready (``SessionFinished``
        after ``finish``; ``Cancelled`` when the token fired)."""

    def finish(self) -> list[Transcript]:
        """End of input: return the last transcripts, every open one final."""

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
