"""A TTS job as a chain of NPU-worker items: one segment each, round robin.

Each item advances one job's ``synthesize`` generator up to the next chunk
that ends a segment (``AudioChunk.end_of_segment``: where the engine holds no
state on shared buffers, the SDK's contract in ``daemon/sdk/tts.py``),
streams those chunks, and queues the job's next item behind whatever waits
then.  So jobs in progress, new requests, ASR session steps and load steps
take turns on the one worker, a segment (about a sentence) at a time, and a
job's audio is exactly what it would be alone.  An engine that never marks a
segment's end runs each request to its end in one item.

A job cancelled while its next item waits has that item skipped: it ends at
once, and its generator is closed by an item of its own (no graph calls).  An
engine is closed only after the jobs in flight on it (``finish_on``, called by
the voice set before it closes an engine): a reload step between two segments
first runs them to their end, on the engine they began on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, InvalidStateError
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from daemon.sdk.cancel import Cancelled
from daemon.sdk.registry import Engine
from daemon.sdk.tts import AudioChunk
from daemon.service.scheduling.jobs import Job
from qnnrt import NpuWorker, WorkerStopped

#: The engine's generator for a job, once the worker resolved its engine.
Begin = Callable[[Engine], Iterator[AudioChunk]]
#: The scheduler's bookkeeping around one item of ``job`` (token checked first).
Stepping = Callable[[Job], AbstractContextManager[None]]
#: How a job ends whose next item the stopped worker refused.
STOPPED = "service stopped"


@dataclass(eq=False)
class Synthesis:
    """One job's progress; ``done`` says how it ended."""

    job: Job
    begin: Begin
    done: Future[None] = field(default_factory=Future)
    engine: Engine | None = None
    chunks: Iterator[AudioChunk] | None = None
    closed: bool = False


class Rounds:
    """The TTS jobs on the worker, each advanced one segment per worker item."""

    def __init__(
        self,
        worker: NpuWorker,
        resolve: Callable[[Job], Engine],
        stepping: Stepping,
    ) -> None:
        self._worker = worker
        self._resolve = resolve  # worker: the job's engine now (or raise)
        self._stepping = stepping
        #: generators started, not closed (worker only)
        self._live: set[Synthesis] = set()

    def start(self, job: Job, begin: Begin) -> Future[None]:
        """Queue ``job``'s first item (event loop); how it ends lands in the
        returned future."""
        s = Synthesis(job, begin)
        self._queue(s)
        return s.done

    def finish_on(self, engine: Engine) -> None:
        """Run every job in flight on ``engine`` to its end (worker, before
        the engine closes)."""
        for s in [s for s in self._live if s.engine is engine]:
            if s.done.done():  # ended while it waited: only its close is left
                self._finish(s, None)
                continue
            try:
                while self._advance(s):
                    pass
            except BaseException as exc:  # noqa: BLE001 - the job ends with it
                self._finish(s, exc)
            else:
                self._finish(s, None)

    # -- worker ----------------------------------------------------------------

    def _round(self, s: Synthesis) -> None:
        if s.done.done():  # an engine's close ran it to its end meanwhile
            self._finish(s, None)
            return
        try:
            more = self._advance(s)
        except BaseException as exc:  # noqa: BLE001 - the job ends with it
            self._finish(s, exc)
            return
        if not more:
            self._finish(s, None)
            return
        try:
            self._queue(s)
        except WorkerStopped:
            self._finish(s, Cancelled(STOPPED))

    def _advance(self, s: Synthesis) -> bool:
        """Stream ``s``'s chunks up to a segment's end: True if more may follow."""
        job = s.job
        if s.chunks is None:
            job.token.check()  # cancelled or expired while it waited
            s.engine = self._resolve(job)
        with self._stepping(job):
            if s.chunks is None:
                assert s.engine is not None
                s.chunks = s.begin(s.engine)
                self._live.add(s)
            for chunk in s.chunks:
                job.token.beat = time.monotonic()
                job.audio_s += chunk.seconds
                job.push(chunk)
                job.token.check()  # the client may have left meanwhile
                if chunk.end_of_segment:
                    return True
        return False

    def _finish(self, s: Synthesis, exc: BaseException | None) -> None:
        """Close ``s``'s generator (its cleanup runs here, on the worker), then
        say how it ended."""
        self._live.discard(s)
        close = None if s.closed else getattr(s.chunks, "close", None)
        s.closed = True
        if close is not None:
            try:
                close()
            except Exception as e:  # noqa: BLE001 - reported as the job's end
                exc = exc or e
        _end(s, exc)

    # -- any thread ------------------------------------------------------------

    def _queue(self, s: Synthesis) -> None:
        fut = self._worker.submit(self._round, s)
        fut.add_done_callback(lambda f: self._skipped(s) if f.cancelled() else None)
        s.job.future = fut  # Job.cancel skips it if it has not started
        if s.job.token.cancelled:  # cancelled just now: Job.cancel saw the last
            fut.cancel()

    def _skipped(self, s: Synthesis) -> None:
        """``s``'s next item was cancelled before it started: the job ends now;
        a generator it left open is closed on the worker."""
        _end(s, Cancelled(s.job.token.reason or "cancelled"))
        if s.chunks is not None:
            try:
                self._worker.submit(self._finish, s, None)
            except WorkerStopped:  # the engines closed first: finish_on closed it
                pass


def _end(s: Synthesis, exc: BaseException | None) -> None:
    try:
        if exc is None:
            s.done.set_result(None)
        else:
            s.done.set_exception(exc)
    except InvalidStateError:  # it already ended (skipped, or finished on close)
        pass
