"""An ASR session as a chain of NPU-worker items, driven from the event loop.

A TTS job is a chain of worker items, a segment each (``rounds.py``).  A
transcription session lives as long as its client speaks, so holding the
worker from ``open`` to ``finish`` would keep every other request waiting (and
a session mostly waits for audio).  Instead ``Sessions`` gives each session a
driver, a task on the event loop, that hands the worker one small step at a
time: ``open``; per chunk of audio, ``feed`` and then each transcript of the
iterable it returned, one ``next`` per item; ``finish`` the same way; and
``close``.  Each step joins the worker's FIFO queue behind whatever is queued
then, so TTS requests and other engines' sessions run between two steps.

The session holds its engine's turn (``turns.py``) from before ``open`` until
after ``close``: no second session of that engine, and no reload, comes in
between.  Every step but ``close`` first checks the job's token (a cancelled
or expired session makes no more graph calls); ``close`` always runs, and
closes an iterable left half-read (a generator's cleanup runs on the worker).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar, cast

from daemon.sdk.asr import AsrEngine, AsrSession, Transcript, TranscriptionOptions
from daemon.sdk.cancel import Cancelled
from daemon.sdk.registry import Engine
from daemon.service.scheduling.jobs import AsrJob
from daemon.service.scheduling.rounds import Stepping
from daemon.service.scheduling.turns import Turn, Turns
from qnnrt import NpuWorker

_LOGGER = logging.getLogger(__name__)
_END: Final = object()  # an iterable ran out
T = TypeVar("T")


class Step(Protocol):
    """Queue ``fn(*args)`` as one worker item of ``job`` (its token checked)."""

    def __call__(self, job: AsrJob, fn: Callable[..., T], *args: Any) -> Future[T]: ...


class Sessions:
    """The ASR sessions on the worker, each driven a step at a time from the
    event loop while it holds its engine's turn."""

    def __init__(
        self,
        worker: NpuWorker,
        turns: Turns,
        resolve: Callable[[AsrJob], Engine],
        stepping: Stepping,
    ) -> None:
        self._worker = worker
        self._turns = turns
        self._resolve = resolve  # worker: the job's engine now (or raise)
        self._stepping = stepping
        self._drivers: set[asyncio.Task[None]] = set()

    def start(
        self,
        job: AsrJob,
        options: TranscriptionOptions,
        ended: Callable[[BaseException | None], None],
    ) -> None:
        """Drive ``job``'s session to its end (event loop); ``ended`` hears
        how it ended, once its turn is given back."""
        turn = self._turns.ask(job.voice.engine_key)
        # Granted now: open joins the worker's queue now, in arrival order.
        first = None
        if turn.granted.done():
            first = self.step(job, self._open, job, options)

        def opening() -> Future[AsrSession]:
            return first or self.step(job, self._open, job, options)

        def cleanup(fn: Callable[[], None]) -> Future[None]:
            return self._worker.submit(fn)

        async def run() -> None:
            exc: BaseException | None = None
            try:
                await drive(job, turn, opening, self.step, cleanup)
            except asyncio.CancelledError:  # the loop is shutting down
                exc = Cancelled(job.token.reason or "service stopped")
                raise
            except Exception as e:  # noqa: BLE001 - the job ends with it
                exc = e
            finally:
                self._turns.done(turn)
                ended(exc)

        task = asyncio.get_running_loop().create_task(run())
        self._drivers.add(task)
        task.add_done_callback(self._drivers.discard)

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout``) for every session to have closed."""
        if self._drivers:
            await asyncio.wait(list(self._drivers), timeout=timeout)

    def step(self, job: AsrJob, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue ``fn(*args)`` as one worker item of the session ``job``."""
        return self._worker.submit(self._session_step, job, fn, *args)

    def _session_step(self, job: AsrJob, fn: Callable[..., T], *args: Any) -> T:
        with self._stepping(job):
            return fn(*args)

    def _open(self, job: AsrJob, options: TranscriptionOptions) -> AsrSession:
        # the voice's task: checked at the edge
        return cast(AsrEngine, self._resolve(job)).open(options, job.token)


@dataclass
class _Open:
    """What the worker must clean up: the session, and an iterable it was
    reading when the session ended."""

    session: AsrSession | None = None
    items: Iterator[Transcript] | None = None


async def drive(
    job: AsrJob,
    turn: Turn,
    opening: Callable[[], Future[AsrSession]],
    step: Step,
    cleanup: Callable[[Callable[[], None]], Future[None]],
) -> None:
    """Run ``job``'s session to its end (raises how it failed).  ``opening``
    queues the ``open`` step; ``cleanup`` queues a worker item unchecked."""
    state = _Open()
    try:
        await job.until(turn.granted)
        state.session = await _result(job, opening())
        session = state.session
        while (pcm := await job.take()) is not None:
            await _stream(job, step, state, session.feed, pcm, job.sample_rate)
            job.audio_s += len(pcm) / job.sample_rate
        await _stream(job, step, state, session.finish)
    finally:
        if state.session is not None:
            await _close(job, state, cleanup)


async def _stream(
    job: AsrJob,
    step: Step,
    state: _Open,
    call: Callable[..., Iterable[Transcript]],
    *args: Any,
) -> None:
    """``call(*args)`` and each item of what it returns, one worker item each;
    every transcript goes to the client as soon as it is made."""
    item = await _result(job, step(job, _start, state, call, *args))
    while item is not _END:
        job.put(item)
        item = await _result(job, step(job, _next, state))
    state.items = None


def _start(state: _Open, call: Callable[..., Iterable[Transcript]], *args: Any) -> Any:
    state.items = iter(call(*args))  # worker
    return next(state.items, _END)


def _next(state: _Open) -> Any:  # worker
    assert state.items is not None
    return next(state.items, _END)


async def _result(job: AsrJob, fut: Future[T]) -> T:
    """What a step gave; a step skipped because the job was cancelled while it
    waited raises ``Cancelled``."""
    job.future = fut  # Job.cancel skips it if it has not started
    try:
        return await asyncio.wrap_future(fut)
    except asyncio.CancelledError:
        if fut.cancelled() and job.token.cancelled:
            raise Cancelled(job.token.reason) from None
        raise
    finally:
        job.future = None


async def _close(
    job: AsrJob, state: _Open, cleanup: Callable[[Callable[[], None]], Future[None]]
) -> None:
    def close() -> None:  # worker
        items, session = state.items, state.session
        try:
            stop = getattr(items, "close", None)
            if stop is not None:
                stop()  # a generator cut short: its own cleanup runs here
        finally:
            if session is not None:
                session.close()

    try:
        # Shielded: a driver cancelled at shutdown still waits for its close.
        await asyncio.shield(asyncio.wrap_future(cleanup(close)))
    except Exception:  # noqa: BLE001 - the session's own outcome matters
        _LOGGER.exception("%s: closing a session failed", job.voice.name)
