"""The engines a service runs: one per voice bundle, each loaded, warmed up,
replaced and evicted on its own.  Built, changed and closed on the NPU worker
thread only (``reload.py`` decides what changes, and when).

Each bundle's graphs are opened alone (``GraphHost.open([bundle])``), so each has
its own QNN multi-context group and evicting one engine frees exactly its
contexts.  One group for every binary would share one spill-fill buffer among all
engines (less NPU memory), but then no engine could leave without the others;
whether that sharing matters is for board measurements to tell.  All groups
live in one QNN backend (one device, one power vote, one rpcmem allocator).

Loading a bundle is two steps so a reload can fail before it touches anything:
``Checked.read`` (bundles.py) reads and verifies it, ``open`` loads the checked
bundle beside the loaded ones.  ``open`` calls ``checkpoint`` between steps (each
graph, the engine load, every graph call of the warm-up), which raises
``LoadStopped`` when the service is stopping.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.graphs import Checkpoint, GraphHost, go_on
from daemon.sdk.registry import Engine, engine_for
from daemon.service.config import ServeConfig
from daemon.service.voices.bundles import Checked, LoadedEngine, Settings, settings
from daemon.service.voices.voice import Voice
from qnnrt import QnnError

_LOGGER = logging.getLogger(__name__)
#: QNN codes that mean "no room now", not "this bundle is broken" (QnnCommon.h,
#: QnnDevice.h): MEM_ALLOC, RESOURCE_UNAVAILABLE, HARDWARE_UNAVAILABLE.
QNN_NO_ROOM: Final = frozenset({1002, 1010, 14002})


class LoadStopped(Exception):
    """The service is stopping: a load gave up between two of its steps."""


def no_room(exc: BaseException) -> bool:
    """Did a load fail for lack of memory or NPU resources (worth retrying with
    other voices freed), rather than because of the bundle itself?"""
    for e in (exc, exc.__cause__):
        if isinstance(e, MemoryError):
            return True
        if isinstance(e, QnnError) and e.code in QNN_NO_ROOM:
            return True
        if isinstance(e, OSError) and e.errno == errno.ENOMEM:
            return True
    return False


class VoiceSet:
    """The loaded engines, by bundle name, in config order."""

    def __init__(self) -> None:
        self.loaded: dict[str, LoadedEngine] = {}
        self.default = ""
        #: one graph host (QNN: one backend) per settings in use; ``settings``
        #: are the current config's, for new loads
        self._hosts: dict[Settings, GraphHost] = {}
        self.settings: Settings | None = None
        #: graph calls and seconds of engines evicted
        self._closed = (0, 0.0)
        #: runs before an engine closes: the requests in flight on it end first
        #: (the scheduler's ``Rounds.finish_on``)
        self.before_close: Callable[[Engine], None] = lambda engine: None

    def at(self, path: Path) -> LoadedEngine | None:
        """The engine loaded from the bundle at ``path`` (resolved)."""
        return next(
            (x for x in self.loaded.values() if x.checked.key.path == path), None
        )

    # -- load, put in, evict ---------------------------------------------------

    def open(
        self,
        c: Checked,
        checkpoint: Checkpoint = go_on,
        besides: str | None = None,
        *,
        warm: bool = True,
    ) -> LoadedEngine:
        """Load one checked bundle beside the loaded engines and (``warm``) warm
        it up; it does not serve until ``put``.  ``besides``: the engine it will
        replace (its voice names may repeat)."""
        graphs = self._graphs(c)
        t0 = time.monotonic()
        runners = graphs.open([c.bundle], checkpoint=checkpoint)[0]
        group, status = graphs.group if graphs.backend == "qnn" else None, graphs.status
        engine: Engine | None = None
        try:
            checkpoint()
            engine = engine_for(c.bundle, c.source.engine)()
            engine.load(c.bundle, runners)
            voices = self._voices(engine, besides)
        except BaseException:
            if engine is not None:
                try:
                    engine.close()
                except Exception:  # noqa: BLE001 - the load's own error matters
                    _LOGGER.exception("closing engine %s failed", c.name)
            if group is not None:
                group.close()
            self.prune()
            raise
        le = LoadedEngine(c, engine, list(runners.values()), voices, graphs, group,
                          status)  # fmt: skip
        _LOGGER.info(
            "%s: engine %s loaded in %.2f s (load #%d)",
            c.name, engine.engine_id, time.monotonic() - t0, le.load,
        )  # fmt: skip
        if warm:
            self.warm(le, checkpoint)
        return le

    def warm(self, le: LoadedEngine, checkpoint: Checkpoint = go_on) -> None:
        """Warm up an opened engine; until it is warm its graph calls stop at
        ``checkpoint``.  On failure it is closed."""
        t0 = time.monotonic()
        try:
            checkpoint()
            le.engine.warmup()
            checkpoint()  # stopping during the warm-up: do not go on serving
        except BaseException:
            le.close()
            self.prune()
            raise
        for r in le.runners:
            r.gate = go_on  # loaded: requests stop by their own tokens
        _LOGGER.info("%s: warmed up in %.2f s", le.name, time.monotonic() - t0)

    def _voices(self, engine: Engine, besides: str | None) -> dict[str, Voice]:
        others = [x for x in self.loaded.values() if x.name != besides]
        taken = {v for x in others for v in x.voices}
        out: dict[str, Voice] = {}
        for v in engine.voices():
            if v.name in taken or v.name in out:
                raise BundleError(f"voice name {v.name!r} is used twice")
            out[v.name] = Voice.of(v, engine)
        if not out:
            raise BundleError(f"{engine.engine_id}: the bundle offers no voices")
        return out

    def put(self, le: LoadedEngine, replaces: str | None = None) -> list[LoadedEngine]:
        """``le`` serves from now on, in the place of ``replaces`` and of its
        namesake, which are evicted (and returned)."""
        gone = [n for n in dict.fromkeys((replaces, le.name)) if n in self.loaded]
        names = list(self.loaded)
        at = min((names.index(n) for n in gone), default=len(names))
        old = [self.evict(n) for n in gone]
        items = list(self.loaded.items())
        items.insert(at, (le.name, le))  # every evicted one was at `at` or after
        self.loaded = dict(items)
        return old

    def evict(self, name: str) -> LoadedEngine:
        """Close one engine and its graphs; the others are untouched."""
        self.before_close(self.loaded[name].engine)
        le = self.loaded.pop(name)
        calls, secs = self._closed
        self._closed = (calls + le.graph_calls(), secs + le.graph_seconds())
        le.close()
        self.prune()
        return le

    def reopen(self, le: LoadedEngine, checkpoint: Checkpoint = go_on) -> LoadedEngine:
        """An evicted engine loaded again from the manifest it was loaded with,
        if every file still hashes as it says; never from files changed since."""
        le.checked.unchanged()
        return self.open(le.checked, checkpoint)

    def order(self, names: Iterable[str]) -> None:
        """Serve (and pick defaults) in this order; others after them."""
        first = [n for n in names if n in self.loaded]
        rest = [n for n in self.loaded if n not in first]
        self.loaded = {n: self.loaded[n] for n in (*first, *rest)}

    def _graphs(self, c: Checked) -> GraphHost:
        host = self._hosts.get(c.key.settings)
        if host is None:
            e = c.config
            host = self._hosts[c.key.settings] = GraphHost(
                e.backend,
                lib_dir=str(e.qnn_lib_dir) if e.qnn_lib_dir else None,
                power=e.power,
                threads=e.threads,
            )
        return host

    def prune(self) -> None:
        """Close the backends no engine uses, but the current settings' one."""
        for key, host in list(self._hosts.items()):
            if key != self.settings and all(
                le.graphs is not host for le in self.loaded.values()
            ):
                del self._hosts[key]
                host.close()
                _LOGGER.info("%s backend closed: no engine uses it", key[0])

    # -- what the host reads -----------------------------------------------------

    @property
    def engines(self) -> list[Engine]:
        return [le.engine for le in self.loaded.values()]

    @property
    def by_voice(self) -> dict[str, tuple[Engine, Voice]]:
        return {
            name: (le.engine, v)
            for le in self.loaded.values()
            for name, v in le.voices.items()
        }

    @property
    def voices(self) -> dict[str, Voice]:
        return {name: v for le in self.loaded.values() for name, v in le.voices.items()}

    def pick_default(self) -> str | None:
        """The default voice: as set while it is loaded, else the first."""
        if self.default not in self.voices:
            self.default = next(iter(self.voices), "")
        return self.default or None

    def report(self) -> dict[str, dict[str, object]]:
        """Per engine (bundle name): its voices, load number and graph calls."""
        return {
            le.name: {
                "voices": sorted(le.voices),
                "load": le.load,
                "graph_calls": le.graph_calls(),
            }  # fmt: skip
            for le in self.loaded.values()
        }

    @property
    def status(self) -> str:
        seen = {le.status for le in self.loaded.values()}
        if len(seen) <= 1:
            return next(iter(seen), "no graphs")
        return "; ".join(f"{le.name}: {le.status}" for le in self.loaded.values())

    def graph_calls(self) -> int:
        return self._closed[0] + sum(le.graph_calls() for le in self.loaded.values())

    def graph_seconds(self) -> float:
        return self._closed[1] + sum(le.graph_seconds() for le in self.loaded.values())

    def close(self) -> None:
        for name in reversed(list(self.loaded)):
            self.evict(name)
        for host in self._hosts.values():
            host.close()
        self._hosts.clear()

    @classmethod
    def open_all(cls, cfg: ServeConfig, checkpoint: Checkpoint = go_on) -> VoiceSet:
        """Every bundle of ``cfg`` loaded, for in-process tools (benchmarks)."""
        vs = cls()
        vs.settings = settings(cfg.engine)
        try:
            checked = [Checked.read(v, cfg.engine) for v in cfg.voices]
            for c in checked:
                vs.put(vs.open(c, checkpoint))
        except BaseException:
            vs.close()
            raise
        vs.default = cfg.default_voice or next(iter(vs.voices))
        return vs
