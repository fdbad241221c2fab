"""The engine host: one NPU worker thread owns every engine and QNN call.

It loads the voices on the worker, checks each request once against its voice's
capabilities and hands it to the ``Scheduler`` (scheduling/): one bounded
queue on the ``qnnrt.NpuWorker`` for every task, synthesis requests and
transcription sessions alike, taking turns a segment or a step at a time, with
the same "busy" answer, deadline and cancellation.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Collection
from typing import TypeVar

from daemon.sdk.capabilities import Task
from daemon.sdk.cloning import unfit
from daemon.sdk.registry import Engine
from daemon.service.cloning.clones import Clones
from daemon.service.config import ServeConfig, VoiceSource
from daemon.service.edge.metrics import Metrics
from daemon.service.edge.refusals import Unavailable
from daemon.service.edge.requests import SynthesisRequest, TranscriptionRequest, check
from daemon.service.scheduling.jobs import AsrJob, Job
from daemon.service.scheduling.scheduler import Scheduler
from daemon.service.voices.reload import Loader
from daemon.service.voices.voice import NO_VOICES, Voice, capabilities, pick
from daemon.service.voices.voiceset import VoiceSet
from qnnrt import NpuWorker

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")


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
        self._set: VoiceSet | None = VoiceSet()  # changed on the worker only
        self._stopping = threading.Event()  # set once: loads stop at a checkpoint
        self._loader = Loader(self._set, self._worker, self._stopping, self.publish)
        #: what the last load or reload did, by bundle name (for /health)
        self.changes: dict[str, list[str]] = {}
        #: the last reload's outcome ("ok", "failed: ..."); None before any
        self.reload: str | None = None
        self.jobs = Scheduler(
            self._worker,
            metrics,
            lambda: self.cfg.limits,
            self._engine_for,
            self.graph_calls,
        )
        self._set.before_close = self.jobs.rounds.finish_on
        #: cloned voices (clones.py): stored, and offered through their engines
        self.clones = Clones(cfg.voice_store, self)
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
        """Load every voice (start-up), or apply a changed config engine by
        engine (SIGHUP): unchanged engines serve on untouched (voices/reload.py).

        Raises the first failure (at start-up, at once).  Whatever the worker
        serves afterwards is what the protocols see from then on.
        """
        starting = self.state == "starting"
        if starting:
            await self.clones.open()  # offered as their engines load
        else:
            await self.clones.reload(cfg.voice_store)  # files changed by hand too
        ch = await self._loading(self._loader.apply(cfg, starting))
        self.changes = ch.as_dict()
        if ch.errors:
            raise ch.errors[0]
        self.cfg = cfg
        if self.state == "starting":
            self.state = "ready"

    # One engine at a time (voices/reload.py), beside the others, which serve on.
    async def load_engine(self, source: VoiceSource) -> None:
        """Add the engine of one more bundle."""
        await self._loading(self._loader.load(source, self.cfg.engine))

    async def reload_engine(self, name: str, source: VoiceSource | None = None) -> None:
        """Load engine ``name`` again (from ``source``) and swap it in; on
        failure the loaded one serves on."""
        await self._loading(self._loader.reload(name, source, self.cfg.engine))

    async def evict_engine(self, name: str) -> None:
        """Drop one engine: its graphs closed, its memory freed."""
        await self._loading(self._loader.evict(name))

    async def _loading(self, load: Awaitable[T]) -> T:
        """Health says "loading" (within ``load_timeout_s``), not "stuck",
        while a load or eviction runs on the worker."""
        self._loading_since = time.monotonic()
        try:
            # After the open sessions: none may have its engine closed under it.
            async with self.jobs.turns.every():
                return await load
        finally:
            self._loading_since = None
            self.publish()

    def reloaded(self, error: str | None) -> None:
        """Record a reload's outcome for /health and /metrics."""
        self.reload = "ok" if error is None else f"failed: {error}"
        self.metrics.reloaded(error is None)

    def publish(self) -> None:
        """What the protocols see, after each load step on the worker or a
        change of the cloned voices (event loop)."""
        vs = self._set
        engine_voices = vs.voices if vs else {}
        loading = self._loading_since is not None
        self.voices = {**engine_voices, **self.clones.offered(engine_voices, loading)}
        self.default_voice = vs.pick_default() if vs else None
        n = len(self.voices)
        self.status = f"{n} voice(s), {vs.status}" if vs and n else NO_VOICES

    def engines(self) -> dict[str, dict[str, object]]:
        """For /health: each engine's voices, load number and graph calls."""
        return self._set.report() if self._set else {}

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

    def resolve(
        self, name: str | None = None, language: str | None = None, task: Task = "tts"
    ) -> Voice:
        """The voice called ``name``, else one of ``task`` speaking ``language``,
        else the default (the configured one, or the first voice of ``task``)."""
        return pick(
            self.voices, self.default_voice, name, language, task, self.clones.unusable
        )

    def check(self, request: SynthesisRequest, formats: Collection[str] = ()) -> Voice:
        """The voice ``request`` asks for, once the request passed the one check
        (``requests.check``) against that voice's capabilities; ``formats``: the
        encodings the asking protocol produces."""
        voice = self.resolve(request.voice, request.language)
        limit = self.cfg.limits.max_input_chars
        check(request, capabilities(voice), max_chars=limit, formats=formats)
        return voice

    def submit(
        self, request: SynthesisRequest, protocol: str, formats: Collection[str] = ()
    ) -> Job:
        """Check and admit a request without waiting: raises ``BadRequest``
        (nothing is queued), ``Busy`` or ``Unavailable``."""
        if self.state != "ready":
            raise Unavailable(f"service is {self.state}")
        voice = self.check(request, formats)
        assert request.text is not None, "a stream's opening is checked, not queued"
        options = request.options(voice.serves, voice.print)
        return self.jobs.tts(voice, request.text, options, protocol)

    def check_session(self, request: TranscriptionRequest) -> Voice:
        """The model ``request`` asks for, once the request passed the one check
        against its capabilities (nothing is admitted)."""
        voice = self.resolve(request.voice, request.language, "asr")
        check(request, capabilities(voice))
        return voice

    def max_audio_s(self, voice: Voice) -> float:
        """Longest audio one session of ``voice`` takes (s): the lower of the
        service's ``limits.max_audio_s`` and the engine's ``max_input``."""
        return min(self.cfg.limits.max_audio_s, capabilities(voice).max_input)

    def open_session(self, request: TranscriptionRequest, protocol: str) -> AsrJob:
        """Check and admit a transcription session without waiting (raises as
        ``submit``); the caller feeds its audio: ``await job.feed(pcm)``, then
        ``job.finish()``, and reads ``async for transcript in job``."""
        if self.state != "ready":
            raise Unavailable(f"service is {self.state}")
        voice = self.check_session(request)
        options = request.options(voice.name)
        return self.jobs.asr(
            voice,
            options,
            (request.sample_rate, request.channels),
            self.max_audio_s(voice),
            protocol,
        )

    def cancel(self, job: Job, reason: str) -> None:
        self.jobs.cancel(job, reason)

    def _engine_for(self, voice: Voice) -> Engine | None:  # worker
        """The engine serving ``voice`` now; None once it is gone, or (a cloned
        voice) once its engine was reloaded with another encoder."""
        entry = self._set.by_voice.get(voice.serves) if self._set else None
        if entry is None:
            return None
        engine, base = entry
        if voice.print is not None:
            cloning = base.capabilities.cloning if base.capabilities else None
            if unfit(voice.print, engine.engine_id, cloning) is not None:
                return None
        return engine

    # -- health and metrics --------------------------------------------------

    def depth(self) -> int:
        return len(self.jobs.jobs)

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
        stalled = now - max(since, self.jobs.beat())
        if stalled > self.cfg.limits.stall_timeout_s:
            return False, f"NPU worker stuck for {stalled:.0f} s"
        return True, "busy"

    # -- shutdown ------------------------------------------------------------

    async def close(self, reason: str = "service stopping") -> None:
        """Cancel every request, free engines and QNN on the worker, stop it."""
        self.state = "stopping"
        self._stopping.set()  # a load still running gives up at its next step
        self.jobs.cancel_all(reason)
        limit = self.cfg.limits.stall_timeout_s
        await self.jobs.settle(limit)  # sessions closed before their engines
        try:
            await asyncio.wait_for(
                asyncio.wrap_future(self._worker.submit(self._unload)), limit
            )
        except asyncio.TimeoutError:
            _LOGGER.error("the NPU worker is stuck; leaving QNN to the exit hook")
        await asyncio.to_thread(self._worker.stop, limit)
        self.state = "closed"
