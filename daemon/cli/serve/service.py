"""The running service: engine host + Wyoming + HTTP servers + systemd signals.

Start-up: sockets (systemd's, else our own; a socket another instance serves
ends the start at once, exit 70) → bundles loaded and warmed up on the NPU
worker → ``READY=1``.  A start-up failure a restart cannot fix (config,
bundle, QNN libraries) exits 78 with one line; anything else exits 70.
SIGTERM/SIGINT: stop accepting, cancel running requests, free QNN on the worker,
remove the sockets we created, exit 0; during loading, the load stops within
one graph load or graph call (warm-up included) and the service exits 0.
SIGHUP: reload config and bundles engine by engine (unchanged bundles keep
their engines; a changed one serves from its old engine until the new one is
loaded, and on if that fails); the listening sockets stay open throughout.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from dataclasses import replace
from typing import Any, Final

from daemon.protocols.openai import app as http_server
from daemon.protocols.wyoming.server import WyomingServer
from daemon.sdk.bundles.manifest import BundleError
from daemon.service.config import ConfigError, ServeConfig
from daemon.service.config_file import check_voices, load_config
from daemon.service.edge import systemd
from daemon.service.edge.admission import Admission
from daemon.service.edge.listeners import Listener, ListenerError, open_listeners
from daemon.service.edge.metrics import Metrics
from daemon.service.edge.systemd import EX_CONFIG, EX_SOFTWARE
from daemon.service.host import EngineHost
from daemon.service.voices.voiceset import LoadStopped
from qnnrt import QnnError, QnnLibraryError

_LOGGER = logging.getLogger(__name__)
#: QNN codes a restart cannot fix: the binary or the libraries do not fit this
#: runtime or board (QnnCommon.h INCOMPATIBLE/LOADING_BINARIES, QnnContext.h
#: INVALID_ARGUMENT/BINARY_VERSION/CREATE_FROM_BINARY/BINARY_CONFIGURATION,
#: QnnSystemContext.h INVALID_ARGUMENT/MALFORMED_BINARY).
QNN_UNFIXABLE: Final = frozenset({1008, 1009, 5000, 5004, 5005, 5008, 30001, 30010})
#: How long aiohttp waits for open HTTP responses once requests are cancelled.
HTTP_SHUTDOWN_S: Final = 5.0
_NS_PER_USEC: Final = 1000
#: Why a stop can take seconds: a graph call is never interrupted (QNN has no
#: abort), and on the x86 HTP simulator one warm-up call was measured at 16 s
#: under load; on the board calls take milliseconds.
STOP_WAIT_NOTE: Final = (
    "a graph call cannot be interrupted: milliseconds on the NPU, up to tens of "
    "seconds on the x86 HTP simulator"
)


class Service:
    """One ``hexvoice serve`` process: built in ``command.main``, run once."""

    def __init__(self, cfg: ServeConfig, overrides: dict[str, Any]) -> None:
        self.cfg = cfg
        self._overrides = overrides
        self.notifier = systemd.Notifier.from_env()
        self._inherited = systemd.listen_fds()  # read (and unset) before anything
        self.metrics = Metrics()
        self.host = EngineHost(cfg, self.metrics)
        self._stop = asyncio.Event()
        self._reload_lock = asyncio.Lock()
        self._listeners: list[Listener] = []

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_stop)
        loop.add_signal_handler(signal.SIGHUP, lambda: loop.create_task(self._reload()))
        n = len(self.cfg.voices)
        self.notifier.status(
            f"Loading {n} voice bundle(s) on {self.cfg.engine.backend}"
        )
        # The sockets are the single-instance lock: bound before any model loads,
        # so a second instance fails in milliseconds instead of after a full NPU
        # load beside the live service.  A client that connects meanwhile waits
        # in the listen backlog until we serve, as under systemd socket activation.
        try:
            self._listeners = open_listeners(self.cfg.listen, self._inherited)
        except ListenerError as exc:
            return await self._fail(str(exc), EX_SOFTWARE)
        t0 = time.monotonic()
        try:
            await self.host.load(self.cfg)
            _LOGGER.info(
                "loaded in %.1f s: %s", time.monotonic() - t0, self.host.status
            )
        except LoadStopped:
            _LOGGER.info("stopped while loading, %.1f s in", time.monotonic() - t0)
            self.notifier.stopping()
            await self.host.close("service stopping")
            self._close_listeners()
            return 0
        except Exception as exc:  # noqa: BLE001 - bundle/engine/QNN: report, exit
            code = exit_status(exc)
            if code == EX_SOFTWARE:
                _LOGGER.exception("start-up failed")
            return await self._fail(describe(exc), code)
        # One cap on connections for both protocols (service/edge/admission.py).
        admission = Admission(self.cfg.limits.max_connections)
        wyoming = WyomingServer(self.host, admission)
        await wyoming.start([x.sock for x in self._listeners if x.kind == "wyoming"])
        runner, sites = await http_server.start(
            self.host,
            [x.sock for x in self._listeners if x.kind == "http"],
            admission,
            HTTP_SHUTDOWN_S,
        )
        where = ", ".join(f"{x.kind} {x.label}" for x in self._listeners)
        _LOGGER.info("serving %s", where)
        self.notifier.ready(f"Ready: {self.host.status}")
        watchdog = None
        period = systemd.watchdog_period()
        if period is not None:
            watchdog = asyncio.create_task(self._watchdog(period))
        await self._stop.wait()

        _LOGGER.info("stopping")
        self.notifier.stopping()
        if watchdog is not None:
            watchdog.cancel()
        await wyoming.stop_accepting()
        for site in sites:
            await site.stop()
        await self.host.close("service stopping")
        await wyoming.close()
        await runner.cleanup()
        self._close_listeners()
        _LOGGER.info("stopped")
        return 0

    def _on_stop(self) -> None:
        if not self._stop.is_set():
            _LOGGER.info("stop requested: %s", self._stop_wait())
        self._stop.set()
        self.host.stop_loading()

    def _stop_wait(self) -> str:
        """What the stop waits for, so a long wait has its reason in the log."""
        what = (
            "the load stops after the graph load or graph call under way"
            if self.host.state == "starting"
            else "running requests are cancelled after their graph call under way"
        )
        return f"{what} ({STOP_WAIT_NOTE})"

    async def _fail(self, why: str, code: int) -> int:
        _LOGGER.error("cannot start: %s", why)
        self.notifier.status(f"Failed: {why}")
        await self.host.close("start-up failed")
        self._close_listeners()
        return code

    def _close_listeners(self) -> None:
        for x in self._listeners:
            x.close()
        self._listeners = []

    async def _watchdog(self, period: float) -> None:
        """Ping only while the event loop runs, the NPU worker makes progress and
        a voice is loaded (``EngineHost.health``)."""
        stuck = False
        while True:
            healthy, why = self.host.health()
            if healthy:
                self.notifier.watchdog()
                if stuck:
                    _LOGGER.info("healthy again (%s)", why)
                    self.notifier.status(f"Ready: {self.host.status}")
            elif not stuck:
                _LOGGER.error("%s; withholding watchdog pings", why)
                self.notifier.status(f"Unhealthy: {why}")
            stuck = not healthy
            await asyncio.sleep(period)

    async def _reload(self) -> None:
        async with self._reload_lock:
            src = self.cfg.source
            _LOGGER.info("SIGHUP: reloading %s", src or "command-line configuration")
            try:
                new = load_config(src, self._overrides)
                check_voices(new)
            except ConfigError as exc:
                _LOGGER.error("reload refused: %s", exc)
                self.host.reloaded(systemd.one_line(str(exc)))
                self.notifier.status(f"Ready (reload refused: {exc})")
                return
            if new.listen != self.cfg.listen:
                _LOGGER.warning("listener changes take effect at the next restart")
                new = replace(new, listen=self.cfg.listen)
            # sd_notify(3): RELOADING=1 carries the CLOCK_MONOTONIC time of the request
            usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // _NS_PER_USEC
            self.notifier.notify("RELOADING=1", f"MONOTONIC_USEC={usec}")
            self.notifier.status("Reloading voices")
            try:
                await self.host.load(new)
            except LoadStopped:
                _LOGGER.info("reload abandoned: the service is stopping")
                return
            except Exception as exc:  # noqa: BLE001 - keep serving the old set
                why = describe(exc)
                _LOGGER.error("reload failed: %s", why)
                _LOGGER.debug("reload failure", exc_info=exc)
                self.host.reloaded(why)
                state = "Ready" if self.host.ready else "Not ready"
                self.notifier.ready(
                    f"{state}: {self.host.status} (reload failed: {why})"
                )
                return
            self.cfg = new
            logging.getLogger().setLevel(new.log_level.upper())
            _LOGGER.info("reloaded: %s", self.host.status)
            self.host.reloaded(None)
            self.notifier.ready(f"Ready: {self.host.status}")


def exit_status(exc: BaseException) -> int:
    """EX_CONFIG for what a restart cannot fix (config, bundle, QNN libraries or
    a binary they refuse), so the unit's RestartPreventExitStatus= ends the loop;
    EX_SOFTWARE otherwise."""
    if isinstance(exc, (ConfigError, BundleError, QnnLibraryError)):
        return EX_CONFIG
    if isinstance(exc, QnnError) and exc.code in QNN_UNFIXABLE:
        return EX_CONFIG
    return EX_SOFTWARE


def describe(exc: BaseException) -> str:
    """One line for the log and STATUS=: what failed, named by its own message
    when it is one of ours, with its type otherwise."""
    text = systemd.one_line(str(exc))
    return text if exit_status(exc) == EX_CONFIG else f"{type(exc).__name__}: {text}"
