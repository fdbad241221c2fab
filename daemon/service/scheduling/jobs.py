"""Requests as the scheduler runs them: the jobs of both tasks.

A ``Job``'s output crosses from the NPU worker to the event loop: the worker
pushes audio chunks or transcripts with ``call_soon_threadsafe``; the event loop
iterates them and may cancel (a consumer that stops iterating cancels the job).
An ``AsrJob`` also carries input the other way: the client's protocol feeds
audio into a bounded channel, the session's driver (``sessions.py``, on the
event loop) takes it and hands each feed to the worker.  A job's cancel
token's ``check()`` (called by engines between graph calls) doubles as the
worker's heartbeat for the systemd watchdog.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import numpy as np

from daemon.sdk.asr import SessionFinished, Transcript, channels_of, pcm_problem
from daemon.sdk.cancel import Cancelled, CancelToken
from daemon.sdk.cloning import VoicePrint
from daemon.sdk.tts import AudioChunk
from daemon.service.edge.refusals import (
    BadRequest,
    BadValue,
    Found,
    Unavailable,
    refuse,
)
from daemon.service.edge.requests import check_duration
from daemon.service.voices.voice import Voice

DEADLINE_REASON: Final = "deadline passed"
CONSUMER_LEFT: Final = "the consumer stopped reading"
#: Audio chunks of one session that may wait for the worker; past it ``feed``
#: waits, so a client is read no faster than the NPU transcribes.  About 2 s of
#: wyoming-satellite's default chunks (1024 samples at 16 kHz).
INPUT_CHUNKS: Final = 32
_END: Final = object()
_FINISH: Final = object()  # input: no more audio
T = TypeVar("T")


class HeartbeatToken(CancelToken):
    """Cancel token whose checks also record that the worker makes progress."""

    def __init__(self, deadline: float | None) -> None:
        super().__init__(deadline)
        self.beat = time.monotonic()

    def check(self) -> None:
        self.beat = time.monotonic()
        super().check()


@dataclass(eq=False)
class Job:
    """One admitted request; ``async for chunk in job`` yields its audio."""

    voice: Voice
    loop: asyncio.AbstractEventLoop
    token: HeartbeatToken
    future: Future[None] | None = None
    running: bool = False
    audio_s: float = 0.0  # written by the worker, read after it finished
    wall_s: float = 0.0
    cancelled_at: tuple[float, int] | None = None  # (time, graph calls so far)
    #: the service's graph-call counter: every cancel, whoever makes it (the
    #: client leaving, the deadline, the host), records how many calls it took
    graph_calls: Callable[[], int] = field(default=lambda: 0, repr=False)
    #: the worker is done and said how (event loop)
    done: bool = False
    error: BaseException | None = None
    _queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)

    def cancel(self, reason: str) -> None:
        if self.cancelled_at is None:
            self.cancelled_at = (time.monotonic(), self.graph_calls())
        if not self.token.cancelled:  # the first reason is the one reported
            self.token.cancel(reason)
        if self.future is not None:
            self.future.cancel()  # not started yet: the worker skips it

    def push(self, item: AudioChunk | Transcript | VoicePrint) -> None:
        """Hand a chunk or transcript to the event loop (worker thread)."""
        try:
            self.loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop closed under us during shutdown
            self.token.cancel("service stopped")

    def put(self, item: Transcript) -> None:
        """Hand a transcript to the consumer (event loop: the session driver)."""
        self._queue.put_nowait(item)

    def end(self, exc: BaseException | None) -> None:
        """End the output stream, with an error or cleanly (event loop)."""
        self.done, self.error = True, exc
        self._queue.put_nowait(_END if exc is None else exc)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        try:
            while True:
                item = await self._wait(self._queue.get())
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:  # the consumer left (task cancelled, iterator closed) or done
            if not self.done:
                self.cancel(CONSUMER_LEFT)

    async def _wait(self, step: Awaitable[T]) -> T:
        """``step``, but no later than the deadline (then ``Cancelled``)."""
        left = None
        if self.token.deadline is not None:
            left = max(0.0, self.token.deadline - time.monotonic())
        try:
            return await asyncio.wait_for(step, left)
        except asyncio.TimeoutError:
            # Waiting in the queue counts too: tell the client at its
            # deadline, not when the worker gets round to the request.
            self.cancel(DEADLINE_REASON)
            raise Cancelled(DEADLINE_REASON) from None


@dataclass(eq=False)
class CloneJob(Job):
    """One admitted registration: ``async for vp in job`` yields its one
    ``VoicePrint``."""


@dataclass(eq=False)
class AsrJob(Job):
    """One admitted transcription session: ``await job.feed(pcm)`` as audio
    arrives, then ``job.finish()``; ``async for transcript in job`` meanwhile."""

    #: the rate and channels every ``feed`` is at (announced by the request)
    sample_rate: int = 0
    channels: int = 1
    #: the longest audio (s) one session takes (host.max_audio_s)
    max_input_s: float = math.inf
    #: the deadline moves to this long after each chunk taken (request_timeout_s)
    timeout_s: float = math.inf
    fed_s: float = 0.0  # accepted so far
    finished: bool = False
    _input: deque[Any] = field(default_factory=deque)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _taken: asyncio.Event = field(default_factory=asyncio.Event)
    _stopped: asyncio.Event = field(default_factory=asyncio.Event)

    async def feed(self, pcm: np.ndarray) -> None:
        """Queue the next samples (float32 ``[n]`` or ``[n, channels]`` at
        ``sample_rate``), waiting while ``INPUT_CHUNKS`` are queued.  Raises
        ``BadRequest`` for audio that is malformed, of other channels, or past
        ``max_input_s`` (then the session is cancelled: the client hears the
        refusal at the cap, not after transcribing it), ``SessionFinished``
        after ``finish``, and how the session ended if it already did."""
        self._open()
        problem = pcm_problem(pcm, self.sample_rate)
        if problem is not None:
            raise BadRequest(problem, "audio")
        if channels_of(pcm) != self.channels:
            expected = f"{self.channels} channel(s), as announced"
            raise refuse(BadValue, "audio", expected, Found(f"{channels_of(pcm)}"))
        seconds = len(pcm) / self.sample_rate
        try:
            check_duration(self.fed_s + seconds, self.max_input_s)
        except BadRequest as bad:
            self.cancel(str(bad))
            raise
        while len(self._input) >= INPUT_CHUNKS:
            self._taken.clear()
            await self._wait(self._either(self._taken))
            self._open()
        self.fed_s += seconds
        self._input.append(pcm)
        self._arrived.set()

    def finish(self) -> None:
        """No more audio: the session's last transcripts follow."""
        self._open()
        self.finished = True
        self._input.append(_FINISH)
        self._arrived.set()

    def cancel(self, reason: str) -> None:
        super().cancel(reason)
        self._stopped.set()  # a driver waiting for audio or a turn sees it now

    def end(self, exc: BaseException | None) -> None:
        super().end(exc)
        self._taken.set()  # a feed waiting for room hears how the session ended

    async def take(self) -> np.ndarray | None:
        """The next samples, or None once finished (the driver; ``Cancelled``
        when cancelled or past the deadline)."""
        while True:
            self.token.check()
            if self._input:
                item = self._input.popleft()
                self._taken.set()
                if not self.token.cancelled:  # progress: the deadline moves on
                    self.token.deadline = time.monotonic() + self.timeout_s
                return None if item is _FINISH else item  # type: ignore[no-any-return]
            self._arrived.clear()
            await self.until(self._arrived.wait())

    async def until(self, step: Awaitable[T]) -> T:
        """``step``, unless the session is cancelled or its deadline passes
        first (then ``Cancelled``; ``step`` itself is left alone)."""
        result: T = await self._wait(self._either(step))
        self.token.check()
        return result

    async def _either(self, step: Awaitable[T] | asyncio.Event) -> T:
        waited = step.wait() if isinstance(step, asyncio.Event) else step
        task = asyncio.ensure_future(waited)
        stop = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not task.done() and task is not step:  # ours, not the caller's
                task.cancel()
        if not task.done():  # cancelled: the caller sees the token
            return None  # type: ignore[return-value]
        return task.result()

    def _open(self) -> None:
        """Refuse input once the session finished or ended (event loop)."""
        if self.finished:
            raise SessionFinished("the session is finished: no audio after finish()")
        if self.done:
            if self.error is not None:
                raise self.error
            raise SessionFinished("the session ended")
        if self.token.cancelled:
            raise Cancelled(self.token.reason)


def outcome(exc: BaseException | None) -> str:
    """The ``requests_total`` outcome label for how a job ended."""
    if exc is None:
        return "ok"
    if isinstance(exc, Cancelled):
        return "timeout" if DEADLINE_REASON in str(exc) else "cancelled"
    if isinstance(exc, BadRequest):
        return "bad_request"
    if isinstance(exc, Unavailable):
        return "cancelled"
    return "error"
