"""Synthesis requests as the engine host runs them: voices, jobs, request errors.

A ``Job`` crosses threads in one direction only: the NPU worker pushes audio
chunks with ``call_soon_threadsafe``; the event loop iterates them and may
cancel.  Its cancel token's ``check()`` (called by engines between graph calls)
doubles as the worker's heartbeat for the systemd watchdog.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Final

from daemon.engine.cancel import Cancelled, CancelToken
from daemon.engine.tts import AudioChunk

DEADLINE_REASON: Final = "deadline passed"
_END: Final = object()


class ServiceError(Exception):
    """A request failed for a reason the client should hear about."""

    code = "error"


class Busy(ServiceError):
    code = "busy"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(ServiceError):
    code = "unavailable"


class BadRequest(ServiceError):
    code = "bad_request"


class UnknownVoice(BadRequest):
    code = "voice_not_found"


class BadText(BadRequest):
    code = "invalid_text"


def check_text(text: str) -> None:
    """Refuse text no engine should see, on both protocols (``BadText``).

    A NUL ends a C string: phonemizers and tokenizers behind ctypes would
    silently drop what follows it, or choke on it.
    """
    at = text.find("\x00")
    if at >= 0:
        raise BadText(
            f"text contains a NUL character (U+0000) at position {at}; remove it"
        )


@dataclass(frozen=True)
class Voice:
    """A voice as the protocols advertise it."""

    name: str
    languages: tuple[str, ...]
    sample_rate: int
    engine_id: str
    description: str = ""
    speakers: tuple[str, ...] = ()
    attribution: tuple[str, str] = ("", "")


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
    _queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)

    def cancel(self, reason: str, graph_calls: int = 0) -> None:
        if self.cancelled_at is None:
            self.cancelled_at = (time.monotonic(), graph_calls)
        if not self.token.cancelled:  # the first reason is the one reported
            self.token.cancel(reason)
        if self.future is not None:
            self.future.cancel()  # not started yet: the worker skips it

    def push(self, chunk: AudioChunk) -> None:
        """Hand a chunk to the event loop (worker thread)."""
        try:
            self.loop.call_soon_threadsafe(self._queue.put_nowait, chunk)
        except RuntimeError:  # the loop closed under us during shutdown
            self.token.cancel("service stopped")

    def finish(self, exc: BaseException | None) -> None:
        """End the audio stream, with an error or cleanly (event loop)."""
        self._queue.put_nowait(_END if exc is None else exc)

    def __aiter__(self) -> AsyncIterator[AudioChunk]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AudioChunk]:
        while True:
            left = None
            if self.token.deadline is not None:
                left = max(0.0, self.token.deadline - time.monotonic())
            try:
                item = await asyncio.wait_for(self._queue.get(), left)
            except asyncio.TimeoutError:
                # Waiting in the queue counts too: tell the client at its
                # deadline, not when the worker gets round to the request.
                self.cancel(DEADLINE_REASON)
                raise Cancelled(DEADLINE_REASON) from None
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item


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
