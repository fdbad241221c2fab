"""What is offered of the stored voices: each voice a loaded engine fits, as a
``Voice`` speaking through that engine's own voice; why the others are not
(told once in the log); how all of them, damaged files too, are listed; and
the refusal of a request for one that cannot speak."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from daemon.sdk.cloning import unfit
from daemon.service.cloning import clone_rules as rules
from daemon.service.cloning.clone_rules import VoiceUnusable
from daemon.service.cloning.voicefile import Entry
from daemon.service.cloning.voicestore import Damaged
from daemon.service.voices.voice import Voice

_LOGGER = logging.getLogger(__name__)
#: Why a stored voice is not offered when its engine is not loaded at all.
NO_ENGINE: Final = "no loaded bundle of engine"


class Offers:
    """The last answer of ``offered``, for the listing and the refusals."""

    def __init__(self) -> None:
        self._unfit: dict[str, str] = {}  # name -> why it is not offered now
        #: not offered although a bundle of its engine is loaded (another
        #: encoder): registering the name again replaces it
        self.stale: set[str] = set()
        self._said: dict[str, str] = {}  # what the log said last

    def offered(
        self,
        entries: Mapping[str, Entry],
        engine_voices: Mapping[str, Voice],
        loading: bool = False,
    ) -> dict[str, Voice]:
        """The stored voices the loaded engines can speak now, as voices.
        While a load runs (``loading``) nothing is logged: a voice whose engine
        comes later in the same load is no news."""
        out: dict[str, Voice] = {}
        why: dict[str, str] = {}
        stale: set[str] = set()
        for name, e in entries.items():
            if name in engine_voices:
                why[name] = f"a loaded bundle offers a voice named {name!r}"
                continue
            base, reason = _base(e, engine_voices)
            if base is None:
                why[name] = reason
                if not reason.startswith(NO_ENGINE):
                    stale.add(name)
            else:
                out[name] = cloned(e, base)
        self._unfit, self.stale = why, stale
        if not loading:
            for name, reason in why.items():
                if self._said.get(name) != reason:
                    _LOGGER.warning("cloned voice %r is not offered: %s", name, reason)
            for name in out.keys() & self._said.keys():
                _LOGGER.info("cloned voice %r is offered again", name)
            self._said = dict(why)
        return out

    def forget(self, name: str) -> None:
        """``name`` was removed: a voice registered under it later is news."""
        self._said.pop(name, None)

    def listing(
        self,
        entries: Mapping[str, Entry],
        damaged: Mapping[str, Damaged],
        voices: Mapping[str, Voice],
    ) -> list[dict[str, Any]]:
        """``GET /v1/voices``: every stored voice, offered or not (and why),
        and every damaged file (by name, with what is wrong)."""
        good = [
            {
                "id": name,
                "object": "voice",
                "name": name,
                "engine": e.print.engine_id,
                "base": e.base,
                "languages": list(voices[name].languages) if name in voices else [],
                "created": int(e.created),
                "transcript": e.transcript,
                "consent": e.consent,
                "bytes": e.bytes,
                "available": name not in self._unfit,
                "reason": self._unfit.get(name),
                "verified": e.verified,
            }
            for name, e in entries.items()
        ]
        bad = [
            {
                "id": name,
                "object": "voice",
                "name": name,
                "engine": None,
                "base": None,
                "languages": [],
                "created": None,
                "transcript": None,
                "consent": None,
                "bytes": d.bytes,
                "available": False,
                "verified": False,
                "reason": f"damaged: {d.reason} (delete it or register it again)",
            }
            for name, d in damaged.items()
        ]
        return sorted(good + bad, key=lambda v: v["name"])

    def unusable(
        self, name: str, entries: Mapping[str, Entry], damaged: Mapping[str, Damaged]
    ) -> VoiceUnusable | None:
        """The refusal of a request for stored voice ``name`` that is not
        offered (None: no such voice, or it is offered)."""
        if name in damaged:
            return rules.damaged(name, damaged[name].reason)
        if name in entries and name in self._unfit:
            return rules.unfit(name, self._unfit[name], name in self.stale)
        return None


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
        return None, f"{NO_ENGINE} {e.print.engine_id}"
    why = ""
    for v in sorted(engine, key=lambda v: v.name != e.base):
        cloning = v.capabilities.cloning if v.capabilities else None
        problem = unfit(e.print, v.engine_id, cloning)
        if problem is None:
            return v, ""
        why = why or f"{v.name}: {problem}"
    return None, why
