"""A voice as the service serves it, and which voice answers a request.

A ``Voice`` is what the protocols advertise (Wyoming ``info``, ``/v1/audio/
voices``): a loaded engine's voice, or a cloned voice speaking through one
(``print`` and ``base``).  ``capabilities`` is what the one request check holds
a request against; ``pick`` chooses the voice a request gets: by name, else by
language, else the default.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Final

from daemon.sdk.capabilities import Capabilities, Task, VoiceInfo
from daemon.sdk.cloning import VoicePrint
from daemon.sdk.registry import Engine
from daemon.service.edge.refusals import (
    RequestError,
    Unavailable,
    UnknownLanguage,
    UnknownVoice,
    refuse,
)
from daemon.text.tags import described, speaks

NO_VOICES: Final = "no voices loaded"


@dataclass(frozen=True)
class Voice:
    """A voice as the protocols advertise it."""

    name: str
    languages: tuple[str, ...]
    sample_rate: int
    engine_id: str
    description: str = ""
    speakers: tuple[str, ...] = ()
    attribution: tuple[str, str] = ("", "")
    #: what its engine declared (``engine.capabilities()``); None: derived from
    #: the fields above by the host (engines that declare nothing)
    capabilities: Capabilities | None = None
    #: which loaded engine serves it (sessions take turns per engine)
    engine_key: Hashable = field(default=0, compare=False, repr=False)
    #: a cloned voice: its print, and the engine's own voice it speaks through
    print: VoicePrint | None = field(default=None, compare=False, repr=False)
    base: str | None = None

    @classmethod
    def of(cls, info: VoiceInfo, engine: Engine) -> Voice:
        """``info`` of a loaded ``engine``, with what the engine declares."""
        caps = engine.capabilities()
        return cls(
            info.name,
            tuple(info.languages),
            caps.sample_rate_out or 0,  # ASR: audio goes in, not out
            engine.engine_id,
            info.description,
            tuple(info.speakers),
            (info.attribution[0], info.attribution[1]),
            caps,
            id(engine),
        )

    @property
    def task(self) -> Task:
        return self.capabilities.task if self.capabilities is not None else "tts"

    @property
    def serves(self) -> str:
        """The engine voice that speaks it (itself, unless it is cloned)."""
        return self.base or self.name


def capabilities(voice: Voice) -> Capabilities:
    """What ``voice``'s engine declared; for an engine that declares nothing,
    what its voice says (languages, speakers, rate; the service's text limit)."""
    if voice.capabilities is not None:
        return voice.capabilities
    return Capabilities(
        "tts",
        voice.languages,
        voice.sample_rate,
        speakers=voice.speakers,
        max_input=math.inf,
    )


def pick(
    voices: Mapping[str, Voice],
    default: str | None,
    name: str | None = None,
    language: str | None = None,
    task: Task = "tts",
    unusable: Callable[[str], RequestError | None] = lambda name: None,
) -> Voice:
    """The voice called ``name``, else one of ``task`` speaking ``language``,
    else ``default`` (the configured one, or the first voice of ``task``).
    ``unusable``: the refusal of a name that is stored but cannot speak (a
    cloned voice no loaded engine fits), None for a name unknown."""
    if not voices:
        raise Unavailable(NO_VOICES)
    if name is not None:
        if name not in voices:
            refusal = unusable(name)
            if refusal is not None:
                raise refusal
            expected = f"one of {sorted(voices)}"
            raise refuse(UnknownVoice, "voice", expected, name)
        return voices[name]  # of another task: the check refuses it
    pool = [v for v in voices.values() if v.task == task]
    if language is not None:
        for v in pool:
            if speaks(v.languages, language):
                return v
        known = sorted({lang for v in pool for lang in v.languages})
        expected = f"a language a loaded voice speaks, {described(known)}"
        raise refuse(UnknownLanguage, "language", expected, language)
    assert default is not None  # set with the voices
    chosen = voices[default]
    if chosen.task == task or not pool:
        return chosen  # no voice of the task: the check says so
    return pool[0]
