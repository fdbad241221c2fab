"""Cloned voices in the service: the store's voices offered through the loaded
engines they fit (offers.py), registration as a queued job, removal.

A cloned voice is a ``Voice`` like any other (listed by ``/v1/audio/voices`` and
Wyoming ``info``, picked by name, checked by the one request check), carrying
its ``VoicePrint`` and the engine voice it speaks through (``Voice.base``): the
host hands both to the engine in ``SynthesisOptions``.  It is offered while a
loaded engine of its ``engine_id`` declares its ``model`` (``cloning.unfit``);
otherwise, or while a bundle offers a voice of the same name, it stays stored
and the log says once why it is not offered.  A file that does not read back
(voicestore.py's ``Damaged``) is listed as unavailable with what is wrong; it,
and a print no loaded bundle of its engine fits, can be deleted and replaced
by registering the name again; a request for either is refused saying so
(``clone_rules.VoiceUnusable``).  The store is read at start and again at each
reload (files added or removed by hand are seen then), and a name the API finds
taken on disk is read at once rather than left stuck.

Registration (``add``) checks the name, the engine and the clip on the event
loop, then runs ``clone`` on the NPU worker through the scheduler, with the same
queue bound, deadline and cancellation as a synthesis, and writes the print to
the store (voicestore.py) only once it is complete.  One engine-neutral API for
every cloning engine: the payload is whatever the engine's print holds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any, Final, Protocol

import numpy as np

from daemon.sdk.cloning import AuxClips, Cloning, unfit
from daemon.service.cloning import voicestore
from daemon.service.cloning.clone_rules import (
    RESERVED,
    BadName,
    NoCloning,
    NotCloned,
    StoreFull,
    StoreUnavailable,
    VoiceExists,
    VoiceUnusable,
    check_aux,
    check_clip,
    check_language,
    check_transcript,
)
from daemon.service.cloning.offers import Offers, cloned
from daemon.service.cloning.voicefile import NAME_RULE, SUFFIX, Entry, valid_name
from daemon.service.cloning.voicestore import Damaged, VoiceStore
from daemon.service.config import DEFAULT_VOICE_DIR, VoiceStoreConfig
from daemon.service.edge.refusals import Found, Unavailable, UnknownVoice, refuse
from daemon.service.scheduling.scheduler import Scheduler
from daemon.service.voices.voice import Voice

_LOGGER = logging.getLogger(__name__)
#: How to turn cloning on when the default store is missing.
NO_STORE_HINT: Final = " (set voice_store.dir, or --voice-dir DIR, to keep them)"


class Host(Protocol):
    """What cloned voices need of the service host (host.py's ``EngineHost``;
    a protocol, so the host can own a ``Clones`` without the two importing each
    other)."""

    voices: dict[str, Voice]
    state: str
    jobs: Scheduler

    def publish(self) -> None: ...


class Clones:
    """The stored voices and what is offered of them (event loop only)."""

    def __init__(self, cfg: VoiceStoreConfig, host: Host) -> None:
        self.store = VoiceStore(cfg)
        self.host = host
        self.entries: dict[str, Entry] = {}
        #: files that do not read back, by name: listed, removable, replaceable
        self.damaged: dict[str, Damaged] = {}
        #: why the store cannot be used (None once it is open)
        self.problem: str | None = "the voice store is not open yet"
        self.offers = Offers()
        self._pending: set[str] = set()  # names being registered
        self._touched: set[str] | None = None  # changed while a scan runs

    async def open(self) -> None:
        """Read the store (at start and at each reload); a store that cannot be
        read leaves cloning off (the service serves on, and says so once)."""
        self._touched = set()
        try:
            scan = await asyncio.to_thread(self.store.load)
        except OSError as exc:
            self.problem = f"voice store {self.store.dir}: {exc.strerror or exc}"
            # The default store is the systemd unit's StateDirectory: missing
            # outside systemd (a checkout, the README's `hexvoice serve`), which
            # is no fault; a store someone configured and cannot be used is.
            routine = self.store.dir == DEFAULT_VOICE_DIR and isinstance(
                exc, FileNotFoundError
            )
            _LOGGER.log(
                logging.INFO if routine else logging.WARNING,
                "%s: cloned voices are off%s",
                self.problem,
                NO_STORE_HINT if routine else "",
            )
            return
        finally:
            touched, self._touched = self._touched, None
        for name in touched:  # added or removed meanwhile: that is the news
            scan.entries.pop(name, None)
            scan.damaged.pop(name, None)
            if name in self.entries:
                scan.entries[name] = self.entries[name]
            if name in self.damaged:
                scan.damaged[name] = self.damaged[name]
        for name in self.entries.keys() - scan.entries.keys() - scan.damaged.keys():
            _LOGGER.warning("cloned voice %r: its file is gone", name)
        for name, e in scan.entries.items():
            if not e.verified and self.entries.get(name) is not e:
                _LOGGER.warning(
                    "cloned voice %r: its file has no checksum (written before "
                    "hexvoice kept them), so damage to it cannot be told; "
                    "register it again to give it one", name,
                )  # fmt: skip
        for name, d in scan.damaged.items():
            if self.damaged.get(name) != d:
                _LOGGER.warning(
                    "voice store %s: %s; listed as damaged (delete it or register "
                    "it again)", self.store.dir, d.reason,
                )  # fmt: skip
        self.entries, self.damaged, self.problem = scan.entries, scan.damaged, None
        _LOGGER.info(
            "voice store %s: %d cloned voice(s), %d damaged",
            self.store.dir, len(self.entries), len(self.damaged),
        )  # fmt: skip

    async def reload(self, cfg: VoiceStoreConfig) -> None:
        """A reload's caps apply at once, and the files are read again; another
        directory takes effect at the restart."""
        self.store.max_count, self.store.max_bytes = cfg.max_count, cfg.max_bytes
        if cfg.dir.absolute() != self.store.dir:
            _LOGGER.warning("voice_store.dir changes take effect at the next restart")
        await self.open()

    def _set(self, name: str, found: Entry | Damaged | None) -> None:
        """What is stored as ``name`` now (None: nothing)."""
        self.entries.pop(name, None)
        self.damaged.pop(name, None)
        if isinstance(found, Entry):
            self.entries[name] = found
        elif found is not None:
            self.damaged[name] = found
        if self._touched is not None:
            self._touched.add(name)

    # -- what is offered (offers.py) -------------------------------------------

    def offered(
        self, engine_voices: Mapping[str, Voice], loading: bool = False
    ) -> dict[str, Voice]:
        """The stored voices the loaded engines can speak now, as voices
        (``Offers.offered``)."""
        return self.offers.offered(self.entries, engine_voices, loading)

    def listing(self) -> list[dict[str, Any]]:
        """``GET /v1/voices``: every stored voice, offered or not (and why)."""
        return self.offers.listing(self.entries, self.damaged, self.host.voices)

    def unusable(self, name: str) -> VoiceUnusable | None:
        """The refusal of a request for stored voice ``name`` that is not
        offered (None: no such voice, or it is offered)."""
        return self.offers.unusable(name, self.entries, self.damaged)

    # -- registration ----------------------------------------------------------

    def check_name(self, name: str) -> None:
        """Refuse a name that is malformed, reserved or taken (before any audio
        is read)."""
        if not valid_name(name):
            rule = f"{NAME_RULE}, not ending in {SUFFIX}"
            raise refuse(BadName, "name", rule, name)
        if name in RESERVED:
            raise refuse(BadName, "name", "a name that is not an OpenAI voice", name)
        # A damaged or stale one is replaced (``add``); a good one never is.
        taken = name in self.entries and name not in self.offers.stale
        if taken or name in self._pending:
            raise VoiceExists(f"name: a cloned voice named {name!r} exists already")
        if name in self.host.voices:
            raise VoiceExists(f"name: a loaded voice is named {name!r} already")

    def cloner(self, model: str | None) -> tuple[Voice, Cloning]:
        """The engine voice to clone with: ``model`` (a loaded voice's name, or
        an engine id), else the first one that clones."""
        if self.host.state != "ready":
            raise Unavailable(f"service is {self.host.state}")
        if self.problem is not None:
            raise StoreUnavailable(f"{self.problem}: cloned voices are off")
        if self.store.max_count == 0:
            raise StoreUnavailable("cloned voices are off (voice_store.max_count: 0)")
        able = [
            v
            for v in self.host.voices.values()
            if v.print is None and v.capabilities and v.capabilities.cloning
        ]
        if not able:
            expected = "a loaded bundle that clones voices (e.g. Qwen3-TTS Base)"
            raise refuse(NoCloning, "model", expected, Found("none loaded"))
        pick = able if model is None else [
            v for v in able if model in (v.name, v.engine_id)
        ]  # fmt: skip
        if not pick:
            names = sorted({v.name for v in able} | {v.engine_id for v in able})
            raise refuse(NoCloning, "model", f"one of {names}", model)
        cloning = pick[0].capabilities.cloning  # type: ignore[union-attr]
        assert cloning is not None
        return pick[0], cloning

    async def add(
        self,
        name: str,
        audio: np.ndarray,
        sample_rate: int,
        transcript: str | None,
        model: str | None,
        protocol: str,
        language: str | None = None,
        aux: AuxClips = (),
    ) -> Voice:
        """Register ``name`` from ``audio`` (float32 mono; ``aux``: more clips
        of the voice, ``language``: the clip's) on the worker and store it; the
        voice is offered as soon as this returns."""
        self.check_name(name)
        voice, cloning = self.cloner(model)
        check_clip(audio, sample_rate, cloning)
        check_aux(aux, cloning)
        transcript = check_transcript(transcript, cloning)
        caps = voice.capabilities
        language = check_language(language, caps.languages if caps else ())
        unwritable = await asyncio.to_thread(self.store.unwritable)
        if unwritable is not None:  # before the clip costs any NPU time
            raise StoreUnavailable(f"{unwritable}: cloned voices cannot be added")
        held = len(self.entries) + len(self.damaged) + len(self._pending)
        if held - self._replaces(name) >= self.store.max_count:
            raise StoreFull(
                f"the voice store is full: voice_store.max_count is "
                f"{self.store.max_count} (remove a voice first)"
            )
        self._pending.add(name)
        try:
            job = self.host.jobs.clone(
                voice, audio, sample_rate, transcript, protocol, language, aux
            )
            # To its end: a client that leaves meanwhile cancels the job.
            (vp,) = [p async for p in job]
            problem = unfit(vp, voice.engine_id, cloning)
            if problem is not None:  # an engine bug, not the client's fault
                raise RuntimeError(
                    f"{voice.engine_id} made an unusable print: {problem}"
                )
            entry = Entry(name, vp, voice.name, time.time(), transcript, 0)
            try:
                stored = await self._write(entry)
            except voicestore.Exists as exc:  # put there behind our back
                self._set(name, await asyncio.to_thread(self.store.read, name))
                self.host.publish()  # listed now, and removable
                if not self._replaces(name):
                    raise VoiceExists(str(exc)) from None
                stored = await self._write(entry)
        finally:
            self._pending.discard(name)
        self._set(name, stored)
        self.host.publish()
        _LOGGER.info(
            "cloned voice %r added (%s, %d bytes)", name, voice.engine_id, stored.bytes
        )
        return self.host.voices.get(name) or cloned(stored, voice)

    def _replaces(self, name: str) -> int:
        """1 if registering ``name`` replaces a stored file, else 0."""
        return int(name in self.damaged or name in self.offers.stale)

    async def _write(self, entry: Entry) -> Entry:
        """``entry`` on disk (over its name's damaged or stale file)."""
        held = {**self.entries, **self.damaged}  # the loop may change them
        try:
            return await asyncio.to_thread(
                self.store.add, entry, held, bool(self._replaces(entry.name))
            )
        except voicestore.StoreFull as exc:
            raise StoreFull(str(exc)) from None
        except OSError as exc:
            raise StoreUnavailable(f"voice store: {exc}") from None

    async def remove(self, name: str) -> None:
        known = name in self.entries or name in self.damaged
        if not known and valid_name(name):  # put there since the last scan?
            self._set(name, await asyncio.to_thread(self.store.read, name))
        if name not in self.entries and name not in self.damaged:
            if name in self.host.voices:
                expected = "a cloned voice (bundles are removed from the config)"
                raise refuse(NotCloned, "name", expected, name)
            expected = f"one of {sorted(self.entries.keys() | self.damaged.keys())}"
            raise refuse(UnknownVoice, "name", expected, name)
        try:
            await asyncio.to_thread(self.store.remove, name)
        except voicestore.Missing:
            pass  # removed behind our back: it is gone either way
        except OSError as exc:
            why = f"cannot remove {name}{SUFFIX} ({exc.strerror or exc})"
            raise StoreUnavailable(f"voice store {self.store.dir}: {why}") from None
        self._set(name, None)
        self.offers.forget(name)
        self.host.publish()
        _LOGGER.info("cloned voice %r removed", name)
