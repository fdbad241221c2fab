"""Requests on the NPU worker: one bounded FIFO queue for every task.

A request is admitted on the event loop if at most ``queue_size`` others wait
behind the running one (else ``Busy``), then runs on the ``qnnrt.NpuWorker`` in
FIFO order, one at a time, until it is done:

- a TTS job iterates ``synthesize`` and streams each chunk back;
- an ASR job opens a session, feeds it the client's audio as it arrives and
  finishes it, streaming each transcript back.  It holds the worker from open to
  finish: engines reuse graph buffers, and a session may keep state bound to its
  engine's graphs (a KV cache), so two requests never interleave on the NPU.

A job is cancelled when its client leaves or its deadline passes: within one
graph call if it runs (engines check the token between calls; an ASR session
waiting for audio wakes at once), and skipped if it has not started.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Final, cast

from daemon.engine.asr import AsrEngine, TranscriptionOptions
from daemon.engine.cancel import Cancelled
from daemon.engine.registry import Engine
from daemon.engine.requests import BadRequest, RequestError, UnknownVoice
from daemon.engine.tts import SynthesisOptions, TtsEngine
from daemon.service.config import LimitsConfig
from daemon.service.jobs import AsrJob, Busy, HeartbeatToken, Job, Voice, outcome
from daemon.service.metrics import Metrics
from qnnrt import NpuWorker

_LOGGER = logging.getLogger(__name__)
#: Bounds of the Retry-After hint given to busy clients (s).
RETRY_AFTER_MIN_S: Final = 1
RETRY_AFTER_MAX_S: Final = 60


class Scheduler:
    """Admits, runs and cancels the requests of every task on one worker."""

    def __init__(
        self,
        worker: NpuWorker,
        metrics: Metrics,
        limits: Callable[[], LimitsConfig],
        engine_for: Callable[[str], Engine | None],
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
        return self._start(job, protocol, self._run_tts, text, options)

    def asr(
        self,
        voice: Voice,
        options: TranscriptionOptions,
        sample_rate: int,
        protocol: str,
    ) -> AsrJob:
        """Queue a checked transcription session (or raise ``Busy``): the
        caller feeds it (``await job.feed(pcm)``), then ``job.finish()``."""
        caps = voice.capabilities
        longest = caps.max_input if caps is not None else math.inf
        job = AsrJob(
            voice,
            asyncio.get_running_loop(),
            self._admit(protocol),
            graph_calls=self._graph_calls,
            sample_rate=sample_rate,
            max_input_s=longest,
        )
        self._start(job, protocol, self._run_asr, options)
        return job

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
        if len(self.jobs) > limits.queue_size:  # running one + waiting
            self._metrics.request(protocol, "busy")
            wait = self._retry_after()
            raise Busy(
                f"busy: {len(self.jobs)} requests ahead; retry in {wait} s", wait
            )
        return HeartbeatToken(time.monotonic() + limits.request_timeout_s)

    def _start(
        self, job: Job, protocol: str, run: Callable[..., None], *args: object
    ) -> Job:
        self.jobs.add(job)
        job.future = self._worker.submit(run, job, *args)
        job.future.add_done_callback(
            lambda f: job.loop.call_soon_threadsafe(self._finished, job, f, protocol)
        )
        return job

    def _finished(self, job: Job, fut: Future[None], protocol: str) -> None:
        self.jobs.discard(job)
        exc = Cancelled(job.token.reason) if fut.cancelled() else fut.exception()
        if isinstance(exc, ValueError) and not isinstance(exc, RequestError):
            # An engine refused what no capability declares (e.g. text its
            # phonemizer cannot read); the request was checked before queueing.
            exc = BadRequest(str(exc))
        how = outcome(exc)
        if how == "error":
            _LOGGER.error("%s request failed", job.voice.engine_id, exc_info=exc)
        self._metrics.request(protocol, how)
        if job.running:
            if not isinstance(job, AsrJob):
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

    @contextmanager
    def _running(self, job: Job) -> Iterator[Engine]:
        job.token.check()  # cancelled or expired while it waited
        engine = self._engine_for(job.voice.name)
        if engine is None:  # a reload removed it while the request waited
            raise UnknownVoice(f"voice {job.voice.name!r} is no longer loaded")
        self.current, job.running = job, True
        t0 = job.token.beat = time.monotonic()
        try:
            yield engine
        finally:
            job.wall_s = time.monotonic() - t0
            # Progress, too: between here and the worker going idle (busy_since
            # cleared) health must not measure the stall from the job's start.
            self.last_beat = time.monotonic()
            self.current = None

    def _run_tts(self, job: Job, text: str, options: SynthesisOptions) -> None:
        with self._running(job) as found:
            engine = cast(TtsEngine, found)  # the voice's task: checked at the edge
            chunks = engine.synthesize(text, options, job.token)
            try:
                for chunk in chunks:
                    job.token.beat = time.monotonic()
                    job.audio_s += chunk.seconds
                    job.push(chunk)
                    job.token.check()  # the client may have left meanwhile
            finally:
                chunks.close()  # the engine's cleanup runs here, on the NPU thread

    def _run_asr(self, job: AsrJob, options: TranscriptionOptions) -> None:
        with self._running(job) as found:
            engine = cast(AsrEngine, found)  # the voice's task: checked at the edge
            session = engine.open(options, job.token)
            try:
                while (pcm := job.take()) is not None:
                    for transcript in session.feed(pcm, job.sample_rate):
                        job.push(transcript)
                    job.audio_s += len(pcm) / job.sample_rate
                for transcript in session.finish():
                    job.push(transcript)
            finally:
                session.close()
