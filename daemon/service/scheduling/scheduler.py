"""Requests on the NPU worker: one bounded queue for every task, taken in turns.

A request is admitted on the event loop if at most ``queue_size`` others are
admitted and not finished (else ``Busy``).  The ``qnnrt.NpuWorker`` runs its
items one at a time, in the order they were queued, and no request is longer
than one item of it:

- a TTS job is a chain of items (``rounds.py``), each the chunks of one
  segment (about a sentence), the job's next one queued behind what waits;
- an ASR session is a chain too (``sessions.py``): open, each feed and each
  transcript it returned, close; it holds its engine's turn (``turns.py``):
  one open session per engine, the next one waits (admitted, in order);
- a clone, and each step of a load, is one item.

So jobs in progress take turns a segment at a time (round robin), and a new
request waits for at most one item of each one ahead: a sentence queued behind
two long texts speaks after a sentence of each, not after both.  Its audio is
what it would be alone: an engine ends a segment (``AudioChunk.end_of_segment``)
only where it holds nothing of the request on shared buffers, so other requests
of that engine may run there; an engine closes only after the jobs in flight
on it (``Rounds.finish_on``).

A job is cancelled when its client leaves or its deadline passes: within one
graph call if it runs (engines check the token between calls; a session
waiting for audio or its turn wakes at once), at once if it waits for its next
item (skipped; a generator left open is closed on the worker).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Final, TypeVar, cast

import numpy as np

from daemon.sdk.asr import TranscriptionOptions
from daemon.sdk.cancel import Cancelled
from daemon.sdk.cloning import AuxClips, CloningEngine
from daemon.sdk.registry import Engine
from daemon.sdk.tts import AudioChunk, SynthesisOptions, TtsEngine
from daemon.service.config import LimitsConfig
from daemon.service.edge.metrics import Metrics
from daemon.service.edge.refusals import BadRequest, Busy, RequestError, UnknownVoice
from daemon.service.scheduling.jobs import (
    AsrJob,
    CloneJob,
    HeartbeatToken,
    Job,
    outcome,
)
from daemon.service.scheduling.rounds import Rounds
from daemon.service.scheduling.sessions import Sessions
from daemon.service.scheduling.turns import Turns
from daemon.service.voices.voice import Voice
from qnnrt import NpuWorker

_LOGGER = logging.getLogger(__name__)
#: Bounds of the Retry-After hint given to busy clients (s).
RETRY_AFTER_MIN_S: Final = 1
RETRY_AFTER_MAX_S: Final = 60
T = TypeVar("T")


class Scheduler:
    """Admits, runs and cancels the requests of every task on one worker."""

    def __init__(
        self,
        worker: NpuWorker,
        metrics: Metrics,
        limits: Callable[[], LimitsConfig],
        engine_for: Callable[[Voice], Engine | None],
        graph_calls: Callable[[], int],
    ) -> None:
        self._worker = worker
        self._metrics = metrics
        self._limits = limits  # read at admission: a reload may change them
        self._engine_for = engine_for  # worker: the engine serving a voice now
        self._graph_calls = graph_calls
        self.jobs: set[Job] = set()
        #: the job the worker runs (worker writes, health reads)
        self.current: Job | None = None
        #: when the worker last showed progress outside a job (job end)
        self.last_beat = 0.0
        #: engines' turns: one open session each; loads take them all
        self.turns = Turns()
        #: TTS jobs in progress, a segment per worker item
        self.rounds = Rounds(worker, self._engine, self._stepping)
        #: ASR sessions in progress, a step per worker item
        self.sessions = Sessions(worker, self.turns, self._engine, self._stepping)

    # -- event loop ----------------------------------------------------------

    def tts(
        self, voice: Voice, text: str, options: SynthesisOptions, protocol: str
    ) -> Job:
        """Queue a checked synthesis request (or raise ``Busy``)."""
        job = Job(
            voice,
            asyncio.get_running_loop(),
            self._admit(protocol),
            graph_calls=self._graph_calls,
        )

        def begin(engine: Engine) -> Iterator[AudioChunk]:  # worker
            # the voice's task: checked at the edge
            return cast(TtsEngine, engine).synthesize(text, options, job.token)

        self.jobs.add(job)
        self._on_end(job, self.rounds.start(job, begin), protocol)
        return job

    def clone(
        self,
        voice: Voice,
        audio: np.ndarray,
        sample_rate: int,
        transcript: str | None,
        protocol: str,
        language: str | None = None,
        aux: AuxClips = (),
    ) -> CloneJob:
        """Queue the registration of a voice from ``audio`` (float32 mono; and
        ``aux``, more clips of it) on ``voice``'s engine, like any request (or
        raise ``Busy``)."""
        job = CloneJob(
            voice,
            asyncio.get_running_loop(),
            self._admit(protocol),
            graph_calls=self._graph_calls,
        )
        args = (audio, sample_rate, transcript, language, tuple(aux))
        self.jobs.add(job)
        job.future = self._worker.submit(self._run_clone, job, *args)
        self._on_end(job, job.future, protocol)
        return job

    def asr(
        self,
        voice: Voice,
        options: TranscriptionOptions,
        audio: tuple[int, int],
        max_input_s: float,
        protocol: str,
    ) -> AsrJob:
        """Queue a checked transcription session (or raise ``Busy``) of audio at
        ``audio`` (rate, channels): the caller feeds it (``await
        job.feed(pcm)``), then ``job.finish()``."""
        loop = asyncio.get_running_loop()
        rate, channels = audio
        job = AsrJob(
            voice,
            loop,
            self._admit(protocol),
            graph_calls=self._graph_calls,
            sample_rate=rate,
            channels=channels,
            max_input_s=max_input_s,
            timeout_s=self._limits().request_timeout_s,
        )
        self.jobs.add(job)
        self.sessions.start(job, options, lambda exc: self._settle(job, exc, protocol))
        return job

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout``) for every session to have closed."""
        await self.sessions.settle(timeout)

    def cancel(self, job: Job, reason: str) -> None:
        job.cancel(reason)

    def cancel_all(self, reason: str) -> None:
        for job in list(self.jobs):
            self.cancel(job, reason)

    def beat(self) -> float:
        """When the worker last showed progress (its job's last token check)."""
        job = self.current
        return job.token.beat if job is not None else self.last_beat

    def _admit(self, protocol: str) -> HeartbeatToken:
        """The new job's token, if there is room for it (else ``Busy``)."""
        limits = self._limits()
        if len(self.jobs) > limits.queue_size:  # a step on the worker + waiting
            self._metrics.request(protocol, "busy")
            wait = self._retry_after()
            raise Busy(
                f"busy: {len(self.jobs)} requests ahead; retry in {wait} s", wait
            )
        return HeartbeatToken(time.monotonic() + limits.request_timeout_s)

    def _on_end(self, job: Job, done: Future[None], protocol: str) -> None:
        done.add_done_callback(
            lambda f: job.loop.call_soon_threadsafe(self._finished, job, f, protocol)
        )

    def _finished(self, job: Job, fut: Future[None], protocol: str) -> None:
        exc = Cancelled(job.token.reason) if fut.cancelled() else fut.exception()
        self._settle(job, exc, protocol)

    def _settle(self, job: Job, exc: BaseException | None, protocol: str) -> None:
        """Account for a job that ended (event loop), and end its stream."""
        self.jobs.discard(job)
        if isinstance(exc, ValueError) and not isinstance(exc, RequestError):
            # An engine refused what no capability declares (e.g. text its
            # phonemizer cannot read); the request was checked before queueing.
            exc = BadRequest(str(exc))
        how = outcome(exc)
        if how == "error":
            _LOGGER.error("%s request failed", job.voice.engine_id, exc_info=exc)
        self._metrics.request(protocol, how)
        if job.running:
            if not isinstance(job, AsrJob | CloneJob):
                self._metrics.synthesized(job.audio_s, job.wall_s)
            if job.cancelled_at is not None:
                t, calls = job.cancelled_at
                self._metrics.cancelled_after(
                    self._graph_calls() - calls, time.monotonic() - t
                )
        job.end(exc)

    def _retry_after(self) -> int:
        m = self._metrics
        served = m.served() or 1
        guess = math.ceil(m.synthesis_seconds / served * len(self.jobs))
        return min(RETRY_AFTER_MAX_S, max(RETRY_AFTER_MIN_S, guess))

    # -- worker --------------------------------------------------------------

    def _engine(self, job: Job) -> Engine:
        engine = self._engine_for(job.voice)
        if engine is None:  # a reload removed it while the request waited
            raise UnknownVoice(f"voice {job.voice.name!r} is no longer loaded")
        return engine

    @contextmanager
    def _stepping(self, job: Job) -> Iterator[None]:
        """One worker item of ``job``: its token checked first, its time counted."""
        job.token.check()  # cancelled or expired while it waited
        self.current, job.running = job, True
        t0 = job.token.beat = time.monotonic()
        try:
            yield
        finally:
            job.wall_s += time.monotonic() - t0  # worker time, over its items
            # Progress, too: between here and the worker going idle (busy_since
            # cleared) health must not measure the stall from the job's start.
            self.last_beat = time.monotonic()
            self.current = None

    def _run_clone(
        self,
        job: CloneJob,
        audio: np.ndarray,
        rate: int,
        transcript: str | None,
        language: str | None,
        aux: AuxClips,
    ) -> None:
        job.token.check()  # cancelled or expired while it waited
        # it declares cloning: the edge checked
        engine = cast(CloningEngine, self._engine(job))
        with self._stepping(job):
            vp = engine.clone(
                audio, rate, transcript, job.token, language=language, aux=aux
            )
            job.push(vp)
