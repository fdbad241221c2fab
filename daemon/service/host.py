"""The engine host: one NPU worker thread owns every engine and QNN call.

Requests are admitted on the event loop (bounded: ``queue_size`` may wait behind
the running one, the rest are told "busy"), run one at a time in FIFO order on
the ``qnnrt.NpuWorker``, and stream their audio back as the engine yields it.
Engines reuse graph buffers between calls, so two requests never interleave on
the NPU.  A request is cancelled when its client leaves or its deadline passes:
within one graph call if it runs (engines check the token between calls), and
skipped if it has not started.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from concurrent.futures import Future
from importlib import metadata
from typing import Final

from daemon.engine.cancel import Cancelled
from daemon.engine.tts import SynthesisOptions
from daemon.service.config import ServeConfig
from daemon.service.jobs import (
    BadRequest,
    Busy,
    HeartbeatToken,
    Job,
    ServiceError,
    Unavailable,
    UnknownVoice,
    Voice,
    outcome,
)
from daemon.service.metrics import Metrics
from daemon.service.voiceset import LoadStopped, VoiceSet, no_room
from qnnrt import NpuWorker

_LOGGER = logging.getLogger(__name__)
NO_VOICES: Final = "no voices loaded"
#: Bounds of the Retry-After hint given to busy clients (s).
RETRY_AFTER_MIN_S: Final = 1
RETRY_AFTER_MAX_S: Final = 60


class EngineHost:
    """Loads voices on the NPU worker; admits, runs and cancels requests."""

    def __init__(self, cfg: ServeConfig, metrics: Metrics) -> None:
        self.cfg = cfg
        self.metrics = metrics
        self.state = "starting"  # starting | ready | stopping | closed
        self.status = "starting"
        self.voices: dict[str, Voice] = {}
        self.default_voice: str | None = None
        self._worker = NpuWorker("npu")
        self._set: VoiceSet | None = None  # replaced on the worker only
        self._stopping = threading.Event()  # set once: loads stop at a checkpoint
        #: the last reload's outcome ("ok", "failed: ..."); None before any
        self.reload: str | None = None
        self._jobs: set[Job] = set()
        self._current: Job | None = None
        #: when the worker last showed progress outside a job (job end, idle)
        self._last_beat = 0.0
        self._loading_since: float | None = None
        self._closed_graphs = (0, 0.0)  # calls/seconds of voice sets closed
        m = metrics
        m.gauge("queue_depth", "Requests admitted, not finished.", self.depth)
        m.gauge("worker_busy", "1 while the NPU worker runs a job.", self._busy)
        m.gauge("graph_calls_total", "Graph calls executed.", self.graph_calls)
        m.gauge("npu_busy_seconds_total", "Time in graph calls.", self._graph_s)
        m.gauge("ready", "1 when serving (at least one voice).", self._ready)
        m.gauge("voices_loaded", "Voices loaded.", lambda: len(self.voices))

    # -- loading -------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Serving: started, not stopping, and at least one voice loaded."""
        return self.state == "ready" and bool(self.voices)

    def stop_loading(self) -> None:
        """SIGTERM: a running load stops at its next step (graph, engine, warm-up)."""
        self._stopping.set()

    async def load(self, cfg: ServeConfig) -> None:
        """Load every voice (start-up) or replace the set atomically (reload).

        Raises what failed.  Whatever set the worker serves afterwards (the new
        one, the untouched old one, the old one restored, or none) is what the
        protocols see from then on.
        """
        try:
            await asyncio.wrap_future(self._worker.submit(self._swap, cfg))
        finally:
            vs = self._set  # the worker is done with it: it only runs jobs now
            self.voices = vs.voices if vs else {}
            self.default_voice = vs.default if vs else None
            self.status = (
                f"{len(self.voices)} voice(s), {vs.graphs.status}"
                if vs
                else "no voices loaded"
            )
        self.cfg = cfg
        if self.state == "starting":
            self.state = "ready"

    def reloaded(self, error: str | None) -> None:
        """Record a reload's outcome for /health and /metrics."""
        self.reload = "ok" if error is None else f"failed: {error}"
        self.metrics.reloaded(error is None)

    def _checkpoint(self) -> None:  # worker, between two load steps
        if self._stopping.is_set():
            raise LoadStopped("service stopping")

    def _swap(self, cfg: ServeConfig) -> None:  # worker
        self._loading_since = time.monotonic()
        try:
            self._replace(cfg)
        finally:
            self._loading_since = None

    def _replace(self, cfg: ServeConfig) -> None:  # worker
        # Read and check everything first: a broken bundle touches nothing.
        bundles = VoiceSet.verify(cfg, self._checkpoint)
        old = self._set
        try:
            new = VoiceSet.open(cfg, bundles, self._checkpoint)
            how = "beside the old voices"
        except BaseException as exc:
            if old is None or not no_room(exc):
                raise  # the old set, if any, serves on untouched
            _LOGGER.warning(
                "the new voices do not fit beside the old ones (%s): "
                "freeing the old voices first",
                exc,
            )
            self._unload()
            try:
                new = VoiceSet.open(cfg, bundles, self._checkpoint)
            except BaseException:
                self._restore(old)
                raise
            how = "after freeing the old voices"
        self._unload()
        self._set = new
        if old is not None:
            _LOGGER.info("new voices loaded %s", how)

    def _restore(self, old: VoiceSet) -> None:  # worker
        """After a failed free-first reload: the old set again if its files are
        unchanged, else no voices (not ready, so systemd restarts us)."""
        if self._stopping.is_set():
            return
        try:
            self._set = old.reopen(self._checkpoint)
        except Exception as exc:  # noqa: BLE001 - reported; no voices means not ready
            _LOGGER.error("cannot restore the old voices (%s): no voice is loaded", exc)
            return
        _LOGGER.warning("restored the old voices")

    def _unload(self) -> None:  # worker
        vs, self._set = self._set, None
        if vs is not None:
            calls, secs = self._closed_graphs
            self._closed_graphs = (
                calls + vs.graph_calls(),
                secs + vs.graph_seconds(),
            )
            vs.close()

    # -- requests ------------------------------------------------------------

    def resolve(self, name: str | None = None, language: str | None = None) -> Voice:
        """The voice called ``name``, else one speaking ``language``, else default."""
        if not self.voices:
            raise Unavailable(NO_VOICES)
        if name is not None:
            if name not in self.voices:
                raise UnknownVoice(
                    f"unknown voice {name[:80]!r}; available: {sorted(self.voices)}"
                )
            return self.voices[name]
        if language is not None:
            family = language.split("_")[0]
            for v in self.voices.values():
                if language in v.languages or family in (
                    lang.split("_")[0] for lang in v.languages
                ):
                    return v
            raise UnknownVoice(f"no voice speaks {language[:20]!r}")
        assert self.default_voice is not None  # set with the voices
        return self.voices[self.default_voice]

    def submit(
        self, text: str, voice: Voice, options: SynthesisOptions, protocol: str
    ) -> Job:
        """Admit a request (or raise ``Busy``/``Unavailable``) without waiting."""
        if self.state != "ready":
            raise Unavailable(f"service is {self.state}")
        if not self.voices:
            raise Unavailable(NO_VOICES)
        if len(self._jobs) > self.cfg.limits.queue_size:  # running one + waiting
            self.metrics.request(protocol, "busy")
            wait = self._retry_after()
            raise Busy(
                f"busy: {len(self._jobs)} requests ahead; retry in {wait} s", wait
            )
        deadline = time.monotonic() + self.cfg.limits.request_timeout_s
        job = Job(voice, asyncio.get_running_loop(), HeartbeatToken(deadline))
        self._jobs.add(job)
        job.future = self._worker.submit(self._run, job, text, options)
        job.future.add_done_callback(
            lambda f: job.loop.call_soon_threadsafe(self._finished, job, f, protocol)
        )
        return job

    def cancel(self, job: Job, reason: str) -> None:
        job.cancel(reason, self.graph_calls())

    def _run(self, job: Job, text: str, options: SynthesisOptions) -> None:  # worker
        job.token.check()  # cancelled or expired while it waited
        entry = self._set.by_voice.get(job.voice.name) if self._set else None
        if entry is None:  # a reload removed it while the request waited
            raise UnknownVoice(f"voice {job.voice.name!r} is no longer loaded")
        self._current, job.running = job, True
        t0 = job.token.beat = time.monotonic()
        chunks = entry[0].synthesize(text, options, job.token)
        try:
            for chunk in chunks:
                job.token.beat = time.monotonic()
                job.audio_s += chunk.seconds
                job.push(chunk)
                job.token.check()  # the client may have left meanwhile
        finally:
            chunks.close()  # the engine's cleanup runs here, on the NPU thread
            job.wall_s = time.monotonic() - t0
            # Progress, too: between here and the worker going idle (busy_since
            # cleared) health must not measure the stall from the job's start.
            self._last_beat = time.monotonic()
            self._current = None

    def _finished(self, job: Job, fut: Future[None], protocol: str) -> None:  # loop
        self._jobs.discard(job)
        exc = Cancelled(job.token.reason) if fut.cancelled() else fut.exception()
        if isinstance(exc, ValueError) and not isinstance(exc, ServiceError):
            exc = BadRequest(str(exc))  # an engine refused this text or option
        how = outcome(exc)
        if how == "error":
            _LOGGER.error("synthesis failed", exc_info=exc)
        self.metrics.request(protocol, how)
        if job.running:
            self.metrics.synthesized(job.audio_s, job.wall_s)
            if job.cancelled_at is not None:
                t, calls = job.cancelled_at
                self.metrics.cancelled_after(
                    self.graph_calls() - calls, time.monotonic() - t
                )
        job.finish(exc)

    def _retry_after(self) -> int:
        m = self.metrics
        served = m.served() or 1
        guess = math.ceil(m.synthesis_seconds / served * len(self._jobs))
        return min(RETRY_AFTER_MAX_S, max(RETRY_AFTER_MIN_S, guess))

    # -- health and metrics --------------------------------------------------

    def depth(self) -> int:
        return len(self._jobs)

    def _ready(self) -> float:
        return float(self.ready)

    def _busy(self) -> float:
        return float(self._worker.busy_since is not None)

    def graph_calls(self) -> int:
        vs = self._set
        return self._closed_graphs[0] + (vs.graph_calls() if vs else 0)

    def _graph_s(self) -> float:
        vs = self._set
        return self._closed_graphs[1] + (vs.graph_seconds() if vs else 0.0)

    def health(self) -> tuple[bool, str]:
        """(healthy, why): False once loading or one engine step overruns, and
        whenever a started service has no voice (systemd should restart it)."""
        now = time.monotonic()
        loading = self._loading_since
        if loading is not None:
            took = now - loading
            return took < self.cfg.limits.load_timeout_s, f"loading for {took:.0f} s"
        if self.state == "ready" and not self.voices:
            return False, NO_VOICES
        since = self._worker.busy_since
        if since is None:
            return True, "idle"
        job = self._current
        beat = job.token.beat if job is not None else self._last_beat
        stalled = now - max(since, beat)
        if stalled > self.cfg.limits.stall_timeout_s:
            return False, f"NPU worker stuck for {stalled:.0f} s"
        return True, "busy"

    # -- shutdown ------------------------------------------------------------

    async def close(self, reason: str = "service stopping") -> None:
        """Cancel every request, free engines and QNN on the worker, stop it."""
        self.state = "stopping"
        self._stopping.set()  # a load still running gives up at its next step
        for job in list(self._jobs):
            self.cancel(job, reason)
        limit = self.cfg.limits.stall_timeout_s
        try:
            await asyncio.wait_for(
                asyncio.wrap_future(self._worker.submit(self._unload)), limit
            )
        except asyncio.TimeoutError:
            _LOGGER.error("the NPU worker is stuck; leaving QNN to the exit hook")
        await asyncio.to_thread(self._worker.stop, limit)
        self.state = "closed"


def package_version() -> str | None:
    """hexvoice's installed version (None when run from a bare checkout)."""
    try:
        return metadata.version("hexvoice")
    except metadata.PackageNotFoundError:
        return None
