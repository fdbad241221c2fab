"""Cloned voices in the service: the store's voices offered through the loaded
engines they fit, registration as a queued job, removal.

A cloned voice is a ``Voice`` like any other (listed by ``/v1/audio/voices`` and
Wyoming ``info``, picked by name, checked by the one request check), carrying
its ``VoicePrint`` and the engine voice it speaks through (``Voice.base``): the
host hands both to the engine in ``SynthesisOptions``.  It is offered while a
loaded engine of its ``engine_id`` declares its ``model`` (``cloning.unfit``);
otherwise, or while a bundle offers a voice of the same name, it stays stored
and the log says once why it is not offered.

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
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np

from daemon.engine.cloning import AuxClips, Cloning, unfit
from daemon.engine.requests import Found, UnknownVoice, refuse
from daemon.service import voicestore
from daemon.service.clone_rules import (
    RESERVED,
    BadName,
    NoCloning,
    NotCloned,
    StoreFull,
    StoreUnavailable,
    VoiceExists,
    check_aux,
    check_clip,
    check_language,
    check_transcript,
)
from daemon.service.jobs import Unavailable, Voice
from daemon.service.voicestore import Entry, VoiceStore, VoiceStoreConfig

if TYPE_CHECKING:
    from daemon.service.scheduler import Scheduler

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
        #: why the store cannot be used (None once it is open)
        self.problem: str | None = "the voice store is not open yet"
        self._pending: set[str] = set()  # names being registered
        self._unfit: dict[str, str] = {}  # name -> why it is not offered now
        self._said: dict[str, str] = {}  # what the log said last

    async def open(self) -> None:
        """Read the store; a store that cannot be read leaves cloning off (the
        service serves on, and says so once)."""
        try:
            self.entries = await asyncio.to_thread(self.store.load)
        except OSError as exc:
            self.problem = f"voice store {self.store.dir}: {exc.strerror or exc}"
            # The default store is the systemd unit's StateDirectory: missing
            # outside systemd (a checkout, the README's `hexvoice serve`), which
            # is no fault; a store someone configured and cannot be used is.
            routine = self.store.dir == voicestore.DEFAULT_DIR and isinstance(
                exc, FileNotFoundError
            )
            _LOGGER.log(
                logging.INFO if routine else logging.WARNING,
                "%s: cloned voices are off%s",
                self.problem,
                NO_STORE_HINT if routine else "",
            )
            return
        self.problem = None
        _LOGGER.info(
            "voice store %s: %d cloned voice(s)", self.store.dir, len(self.entries)
        )

    def reconfigure(self, cfg: VoiceStoreConfig) -> None:
        """A reload's caps apply at once; another directory at the restart."""
        self.store.max_count, self.store.max_bytes = cfg.max_count, cfg.max_bytes
        if cfg.dir.absolute() != self.store.dir:
            _LOGGER.warning("voice_store.dir changes take effect at the next restart")

    # -- what is offered -------------------------------------------------------

    def offered(
        self, engine_voices: Mapping[str, Voice], loading: bool = False
    ) -> dict[str, Voice]:
        """The stored voices the loaded engines can speak now, as voices.
        While a load runs (``loading``) nothing is logged: a voice whose engine
        comes later in the same load is no news."""
        out: dict[str, Voice] = {}
        why: dict[str, str] = {}
        for name, e in self.entries.items():
            if name in engine_voices:
                why[name] = f"a loaded bundle offers a voice named {name!r}"
                continue
            base, reason = _base(e, engine_voices)
            if base is None:
                why[name] = reason
            else:
                out[name] = cloned(e, base)
        self._unfit = why
        if not loading:
            for name, reason in why.items():
                if self._said.get(name) != reason:
                    _LOGGER.warning("cloned voice %r is not offered: %s", name, reason)
            for name in out.keys() & self._said.keys():
                _LOGGER.info("cloned voice %r is offered again", name)
            self._said = dict(why)
        return out

    def listing(self) -> list[dict[str, Any]]:
        """``GET /v1/voices``: every stored voice, offered or not (and why)."""
        voices = self.host.voices
        return [
            {
                "id": name,
                "object": "voice",
                "name": name,
                "engine": e.print.engine_id,
                "base": e.base,
                "languages": list(voices[name].languages) if name in voices else [],
                "created": int(e.created),
                "transcript": e.transcript,
                "bytes": e.bytes,
                "available": name not in self._unfit,
                "reason": self._unfit.get(name),
            }
            for name, e in sorted(self.entries.items())
        ]

    # -- registration ----------------------------------------------------------

    def check_name(self, name: str) -> None:
        """Refuse a name that is malformed, reserved or taken (before any audio
        is read)."""
        if not voicestore.valid_name(name):
            rule = f"{voicestore.NAME_RULE}, not ending in {voicestore.SUFFIX}"
            raise refuse(BadName, "name", rule, name)
        if name in RESERVED:
            raise refuse(BadName, "name", "a name that is not an OpenAI voice", name)
        if name in self.entries or name in self._pending:
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
        if len(self.entries) + len(self._pending) >= self.store.max_count:
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
                held = dict(self.entries)  # the loop may change it meanwhile
                stored = await asyncio.to_thread(self.store.add, entry, held)
            except voicestore.StoreFull as exc:
                raise StoreFull(str(exc)) from None
            except voicestore.Exists as exc:
                raise VoiceExists(str(exc)) from None
            except OSError as exc:
                raise StoreUnavailable(f"voice store: {exc}") from None
        finally:
            self._pending.discard(name)
        self.entries[name] = stored
        self.host.publish()
        _LOGGER.info(
            "cloned voice %r added (%s, %d bytes)", name, voice.engine_id, stored.bytes
        )
        return self.host.voices.get(name) or cloned(stored, voice)

    async def remove(self, name: str) -> None:
        if name not in self.entries:
            if name in self.host.voices:
                expected = "a cloned voice (bundles are removed from the config)"
                raise refuse(NotCloned, "name", expected, name)
            expected = f"one of {sorted(self.entries)}"
            raise refuse(UnknownVoice, "name", expected, name)
        try:
            await asyncio.to_thread(self.store.remove, name)
        except voicestore.Missing:
            pass  # removed behind our back: it is gone either way
        except OSError as exc:
            raise StoreUnavailable(f"voice store: {exc}") from None
        del self.entries[name]
        self._said.pop(name, None)
        self.host.publish()
        _LOGGER.info("cloned voice %r removed", name)


def cloned(e: Entry, base: Voice) -> Voice:
    """``e`` as a voice speaking through ``base``: its languages, rate and
    limits; no speakers of its own."""
    caps = base.capabilities
    return replace(
        base,
        name=e.name,
        description=f"cloned from a clip ({base.name}, {e.print.engine_id})",
        speakers=(),
        capabilities=replace(caps, speakers=()) if caps is not None else None,
        print=e.print,
        base=base.name,
    )


def _base(e: Entry, voices: Mapping[str, Voice]) -> tuple[Voice | None, str]:
    """The engine voice ``e`` speaks through (its own base first), or why none."""
    engine = [
        v
        for v in voices.values()
        if v.print is None and v.engine_id == e.print.engine_id
    ]
    if not engine:
        return None, f"no loaded bundle of engine {e.print.engine_id}"
    why = ""
    for v in sorted(engine, key=lambda v: v.name != e.base):
        cloning = v.capabilities.cloning if v.capabilities else None
        problem = unfit(e.print, v.engine_id, cloning)
        if problem is None:
            return v, ""
        why = why or f"{v.name}: {problem}"
    return None, why
