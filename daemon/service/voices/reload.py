"""Loads, reloads and evicts engine by engine, and applies a config as such steps.

``Loader.apply`` (start-up and SIGHUP) compares the config's bundles with the
loaded engines by path and manifest hash (``BundleKey``):
- unchanged: kept, the very same engine (no graph load, no warm-up);
- changed (same path, or the same bundle name at a path the config left):
  reloaded, the new engine loaded beside the old one, then swapped in;
- new: added; gone from the config: dropped (evicted: graphs closed).

Every bundle is read and verified before anything loads.  Each step is atomic
on its own: a bundle that fails leaves its old engine serving, and the other
steps still happen.  Only a no-room error (``no_room``) frees engines first: the
one being replaced, then ones the config drops, then old versions of other
changed bundles; if the load fails even so, those come back when their files
still match the hashes they were loaded with.  A reload that fails anywhere drops
nothing: a removed voice serves on until a reload succeeds, so a bad new config
never leaves fewer voices than the old one.  At start-up the first failure ends
the load instead (the service exits).

Each step is its own NPU-worker call, so requests for the other voices run
between the steps of a long reload; a request in flight is never touched.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from daemon.sdk.bundles.manifest import BundleError
from daemon.service.config import ConfigError, EngineConfig, ServeConfig, VoiceSource
from daemon.service.voices.bundles import Checked, LoadedEngine, settings
from daemon.service.voices.voiceset import LoadStopped, VoiceSet, no_room
from qnnrt import NpuWorker

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Changes:
    """What one load or reload did, by bundle name (for the log and /health)."""

    added: list[str] = field(default_factory=list)
    reloaded: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def fail(self, name: str, exc: BaseException) -> None:
        _LOGGER.error("%s: %s", name, exc)
        self.failed.append(name)
        self.errors.append(exc)

    def as_dict(self) -> dict[str, list[str]]:
        return {k: list(getattr(self, k)) for k in self._KINDS}

    def __str__(self) -> str:
        said = [f"{k} {', '.join(getattr(self, k))}" for k in self._KINDS]
        return "; ".join(s for s, k in zip(said, self._KINDS) if getattr(self, k))

    _KINDS = ("added", "reloaded", "kept", "dropped", "failed")


class Loader:
    """The engine-level API (``load``, ``evict``, ``reload``) and ``apply``.

    Runs on the event loop; every change to the ``VoiceSet`` is a step on the NPU
    worker, after which ``publish`` shows the set to the protocols."""

    def __init__(
        self,
        vs: VoiceSet,
        worker: NpuWorker,
        stopping: threading.Event,
        publish: Callable[[], None],
    ) -> None:
        self.vs = vs
        self._worker = worker
        self._stopping = stopping
        self._publish = publish
        #: one load, reload or eviction at a time (SIGHUP or the engine API)
        self._lock = asyncio.Lock()

    def checkpoint(self) -> None:  # worker, between two load steps
        if self._stopping.is_set():
            raise LoadStopped("service stopping")

    async def _step(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        self.checkpoint()
        try:
            return await asyncio.wrap_future(self._worker.submit(fn, *args, **kwargs))
        finally:
            self._publish()

    # -- one engine ------------------------------------------------------------

    async def load(self, source: VoiceSource, e: EngineConfig) -> LoadedEngine:
        """Add one bundle's engine beside the loaded ones."""
        async with self._lock:
            c = await self._step(Checked.read, source, e)
            if c.name in self.vs.loaded:
                raise BundleError(f"{c.bundle.root}: an engine {c.name!r} is loaded "
                                  f"already; reload it instead")  # fmt: skip
            return (await self._load(c, None, []))[0]

    async def reload(
        self,
        name: str,
        source: VoiceSource | None = None,
        e: EngineConfig | None = None,
    ) -> LoadedEngine:
        """Load engine ``name`` again (from ``source``, else from where it came
        from) and swap it in; on failure the loaded one serves on."""
        async with self._lock:
            old = self.vs.loaded[name]
            src = source or old.checked.source
            c = await self._step(Checked.read, src, e or old.checked.config)
            return (await self._load(c, name, [name]))[0]

    async def evict(self, name: str) -> None:
        """Drop one engine: its graphs are closed, its memory freed."""
        async with self._lock:
            await self._evict(name)

    async def _evict(self, name: str) -> None:
        await self._step(self.vs.evict, name)
        _LOGGER.info("%s: evicted", name)

    async def _load(
        self, c: Checked, replaces: str | None, spare: list[str]
    ) -> tuple[LoadedEngine, list[LoadedEngine]]:
        """Load ``c`` beside the others, freeing ``spare`` engines one by one
        only while the failure is a lack of room; the engines freed for a load
        that fails come back (``restore``).  Returns the engine and those freed."""
        freed: list[LoadedEngine] = []
        spare = list(spare)
        while True:
            try:
                le = await self._bring_in(c, replaces)
                break
            except LoadStopped:
                raise
            except Exception as exc:
                victim = next((n for n in spare if n in self.vs.loaded), None)
                if victim is None or not no_room(exc):
                    await self.restore(freed)
                    raise
                _LOGGER.warning(
                    "new %s does not fit beside the loaded voices (%s): "
                    "freeing %s first",
                    c.name, exc, victim,
                )  # fmt: skip
                freed.append(await self._step(self.vs.evict, victim))
                spare.remove(victim)
        how = f"after freeing {', '.join(f.name for f in freed)}" if freed else (
            "beside the loaded voices" if len(self.vs.loaded) > 1 else "")  # fmt: skip
        verb = "reloaded" if replaces else "added"
        _LOGGER.info("%s: %s%s", c.name, verb, f" ({how})" if how else "")
        return le, freed

    async def _bring_in(self, c: Checked, replaces: str | None) -> LoadedEngine:
        # Two worker calls (graphs + engine load, then warm-up and swap-in), so
        # requests for the other voices run between them too.  Stopped between
        # the two, the opened engine's contexts go with the backend at close.
        le = await self._step(self.vs.open, c, self.checkpoint, replaces, warm=False)
        await self._step(self._warm_put, le, replaces)
        return le

    def _warm_put(self, le: LoadedEngine, replaces: str | None) -> None:  # worker
        self.vs.warm(le, self.checkpoint)
        self.vs.put(le, replaces)

    def _reopen(self, old: LoadedEngine) -> None:  # worker
        self.vs.put(self.vs.reopen(old, self.checkpoint))

    async def restore(self, freed: list[LoadedEngine]) -> None:
        """After a failed free-first load: each freed engine again if its files
        are unchanged (never from files changed since), else it stays gone."""
        for old in freed:
            if self._stopping.is_set() or old.name in self.vs.loaded:
                continue
            try:
                await self._step(self._reopen, old)
            except LoadStopped:
                return
            except Exception as exc:  # noqa: BLE001 - reported; the rest serve on
                _LOGGER.error("cannot restore the old voices of %s (%s): they are not "
                              "loaded", old.name, exc)  # fmt: skip
                continue
            _LOGGER.warning("restored the old voices of %s", old.name)

    # -- a whole config ----------------------------------------------------------

    async def apply(self, cfg: ServeConfig, starting: bool) -> Changes:
        """Make the loaded engines what ``cfg`` says (see the module docstring).
        At start-up raises the first failure; later, failures are in the result."""
        async with self._lock:
            return await self._apply(cfg, starting)

    async def _apply(self, cfg: ServeConfig, starting: bool) -> Changes:
        vs, ch = self.vs, Changes()
        vs.settings = settings(cfg.engine)

        def fail(name: str, exc: BaseException) -> None:
            if starting:
                raise exc
            ch.fail(name, exc)

        held = [Path(v.bundle).resolve() for v in cfg.voices]  # never dropped
        checked: list[Checked] = []
        for src, path in zip(cfg.voices, held):
            try:
                checked.append(await self._step(Checked.read, src, cfg.engine))
            except LoadStopped:
                raise
            except Exception as exc:  # noqa: BLE001 - this bundle fails alone
                old = vs.at(path)
                fail(old.name if old else str(src.bundle), exc)
        steps: list[tuple[Checked, str | None]] = []
        for c in checked:
            old = vs.at(c.key.path) or vs.loaded.get(c.name)
            # A namesake at another path is replaced only if the config left it.
            there = old.checked.key.path if old is not None else c.key.path
            if any(c.name == s.name for s, _ in steps) or (
                there != c.key.path and there in held
            ):
                msg = f"{c.bundle.root}: bundle name {c.name!r} is used twice"
                fail(c.name, BundleError(msg))
            elif old is not None and old.checked.key == c.key:
                ch.kept.append(old.name)
            else:
                steps.append((c, old.name if old else None))
        replaced = {r for _, r in steps if r}
        drops = [
            le.name
            for le in vs.loaded.values()
            if le.checked.key.path not in held and le.name not in replaced
        ]
        freed_early: dict[str, LoadedEngine] = {}  # old versions freed for room
        for i, (c, replaces) in enumerate(steps):
            later = [r for _, r in steps[i + 1 :] if r]
            spare = [r for r in (replaces,) if r] + drops + later
            try:
                _, freed = await self._load(c, replaces, spare)
            except LoadStopped:
                raise
            except Exception as exc:  # noqa: BLE001 - this bundle fails alone
                if replaces in freed_early:  # freed for another: bring it back
                    await self.restore([freed_early.pop(replaces)])
                fail(c.name, _naming(exc, c) if not starting else exc)
                continue
            (ch.reloaded if replaces else ch.added).append(c.name)
            for f in freed:
                if f.name in drops:
                    ch.dropped.append(f.name)
                elif f.name in later:
                    freed_early[f.name] = f
        # The default voice, among the voices that remain once drops are done.
        remain = [v for n, le in vs.loaded.items() if n not in drops for v in le.voices]
        want = cfg.default_voice
        if want is not None and want not in remain:
            fail("default_voice", ConfigError(
                f"default_voice {want!r} is not one of {sorted(remain)}"))  # fmt: skip
        for name in drops:
            if name not in vs.loaded:
                continue
            if ch.failed:
                _LOGGER.warning("%s: left the config, kept: the reload failed", name)
                ch.kept.append(name)
            else:
                await self._evict(name)
                ch.dropped.append(name)
        order = [le.name for le in map(vs.at, held) if le is not None]
        await self._step(vs.order, order)
        voices = list(vs.voices)
        if want in voices:
            vs.default = want
        elif want is None or vs.default not in voices:  # first in config order
            vs.default = voices[0] if voices else ""
        self._publish()
        _LOGGER.info("voices: %s", ch)
        return ch


def _naming(exc: Exception, c: Checked) -> Exception:
    """``exc``, or a BundleError naming the bundle when ``exc`` does not (an
    engine's own refusal, a lack of room): a reload's error must say which."""
    root = str(c.bundle.root)
    if root in str(exc):
        return exc
    named = BundleError(f"{root}: {type(exc).__name__}: {exc}")
    named.__cause__ = exc
    return named
