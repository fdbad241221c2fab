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
(``clone_rules.VoiceUnusable``).  What the store holds is ``StoredVoices``
(stored.py), read at start and at each reload.

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
from typing import Any, Protocol

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
    check_consent,
    check_language,
    check_transcript,
)
from daemon.service.cloning.offers import Offers, cloned
from daemon.service.cloning.stored import StoredVoices
from daemon.service.cloning.voicefile import NAME_RULE, SUFFIX, Entry, valid_name
from daemon.service.config import VoiceStoreConfig
from daemon.service.edge.refusals import Found, Unavailable, UnknownVoice, refuse
from daemon.service.scheduling.scheduler import Scheduler
from daemon.service.voices.voice import Voice

_LOGGER = logging.getLogger(__name__)


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
        self.stored = StoredVoices(cfg)
        self.store = self.stored.store
        self.host = host
        self.offers = Offers()
        self.require_consent = cfg.require_consent
        self._pending: set[str] = set()  # names being registered

    async def open(self) -> None:
        """Read the store (at start and at each reload); a store that cannot be
        read leaves cloning off (the service serves on, and says so once)."""
        await self.stored.open()

    async def reload(self, cfg: VoiceStoreConfig) -> None:
        """A reload's caps and consent rule apply at once, and the files are
        read again."""
        self.require_consent = cfg.require_consent
        await self.stored.reload(cfg)

    # -- what is offered (offers.py) -------------------------------------------

    def offered(
        self, engine_voices: Mapping[str, Voice], loading: bool = False
    ) -> dict[str, Voice]:
        """The stored voices the loaded engines can speak now, as voices
        (``Offers.offered``)."""
        return self.offers.offered(self.stored.entries, engine_voices, loading)

    def listing(self) -> list[dict[str, Any]]:
        """``GET /v1/voices``: every stored voice, offered or not (and why)."""
        return self.offers.listing(
            self.stored.entries, self.stored.damaged, self.host.voices
        )

    def unusable(self, name: str) -> VoiceUnusable | None:
        """The refusal of a request for stored voice ``name`` that is not
        offered (None: no such voice, or it is offered)."""
        return self.offers.unusable(name, self.stored.entries, self.stored.damaged)

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
        taken = name in self.stored.entries and name not in self.offers.stale
        if taken or name in self._pending:
            raise VoiceExists(f"name: a cloned voice named {name!r} exists already")
        if name in self.host.voices:
            raise VoiceExists(f"name: a loaded voice is named {name!r} already")

    def cloner(self, model: str | None) -> tuple[Voice, Cloning]:
        """The engine voice to clone with: ``model`` (a loaded voice's name, or
        an engine id), else the first one that clones."""
        if self.host.state != "ready":
            raise Unavailable(f"service is {self.host.state}")
        if self.stored.problem is not None:
            raise StoreUnavailable(f"{self.stored.problem}: cloned voices are off")
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
        pick = [v for v in able if model is None or model in (v.name, v.engine_id)]
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
        consent: str | None = None,
    ) -> Voice:
        """Register ``name`` from ``audio`` (float32 mono; ``aux``: more clips
        of the voice, ``language``: the clip's, ``consent``: the caller's
        statement that the speaker agreed) on the worker and store it; the
        voice is offered as soon as this returns."""
        self.check_name(name)
        voice, cloning = self.cloner(model)
        check_clip(audio, sample_rate, cloning)
        check_aux(aux, cloning)
        transcript = check_transcript(transcript, cloning)
        consent = check_consent(consent, self.consent_required(cloning))
        caps = voice.capabilities
        language = check_language(language, caps.languages if caps else ())
        unwritable = await asyncio.to_thread(self.store.unwritable)
        if unwritable is not None:  # before the clip costs any NPU time
            raise StoreUnavailable(f"{unwritable}: cloned voices cannot be added")
        held = len(self.stored.held()) + len(self._pending)
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
            entry = Entry(
                name, vp, voice.name, time.time(), transcript, 0, consent=consent
            )
            try:
                written = await self._write(entry)
            except voicestore.Exists as exc:  # put there behind our back
                self.stored.set(name, await asyncio.to_thread(self.store.read, name))
                self.host.publish()  # listed now, and removable
                if not self._replaces(name):
                    raise VoiceExists(str(exc)) from None
                written = await self._write(entry)
        finally:
            self._pending.discard(name)
        self.stored.set(name, written)
        self.host.publish()
        _LOGGER.info(
            "cloned voice %r added (%s, %d bytes)", name, voice.engine_id, written.bytes
        )
        return self.host.voices.get(name) or cloned(written, voice)

    def consent_required(self, cloning: Cloning) -> bool:
        """Registering needs a consent statement: the engine asks for one
        (its licence does), or ``voice_store.require_consent`` is on."""
        return self.require_consent or cloning.consent == "required"

    def _replaces(self, name: str) -> int:
        """1 if registering ``name`` replaces a stored file, else 0."""
        return int(name in self.stored.damaged or name in self.offers.stale)

    async def _write(self, entry: Entry) -> Entry:
        """``entry`` on disk (over its name's damaged or stale file)."""
        held = self.stored.held()  # a copy: the loop may change them
        try:
            return await asyncio.to_thread(
                self.store.add, entry, held, bool(self._replaces(entry.name))
            )
        except voicestore.StoreFull as exc:
            raise StoreFull(str(exc)) from None
        except OSError as exc:
            raise StoreUnavailable(f"voice store: {exc}") from None

    async def remove(self, name: str) -> None:
        if name not in self.stored.held() and valid_name(
            name
        ):  # put there since the last scan?
            self.stored.set(name, await asyncio.to_thread(self.store.read, name))
        if name not in self.stored.held():
            if name in self.host.voices:
                expected = "a cloned voice (bundles are removed from the config)"
                raise refuse(NotCloned, "name", expected, name)
            expected = f"one of {sorted(self.stored.held())}"
            raise refuse(UnknownVoice, "name", expected, name)
        try:
            await asyncio.to_thread(self.store.remove, name)
        except voicestore.Missing:
            pass  # removed behind our back: it is gone either way
        except OSError as exc:
            why = f"cannot remove {name}{SUFFIX} ({exc.strerror or exc})"
            raise StoreUnavailable(f"voice store {self.store.dir}: {why}") from None
        self.stored.set(name, None)
        self.offers.forget(name)
        self.host.publish()
        _LOGGER.info("cloned voice %r removed", name)
