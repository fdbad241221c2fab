"""Wyoming's request side: ``synthesize`` and ``synthesize-start`` data as
``SynthesisRequest``\\ s, and refusals as ``error`` events.

The event data is read by the one typed reader (types only); the host checks
the request once, against the voice's capabilities, before queueing
(``daemon.engine.requests``).  Wyoming carries no speed, seed or format: those
stay at their defaults.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from wyoming.error import Error
from wyoming.event import Event

from daemon.engine.requests import BadRequest, RequestError, SynthesisRequest, decode

#: The event field each ``SynthesisRequest`` field comes from (others: same name).
WIRE: Final = {
    "voice": "voice.name",
    "speaker": "voice.speaker",
    "language": "voice.language",
}


class VoiceData(msgspec.Struct, frozen=True):
    """``SynthesizeVoice``: a name (overrides language), a language, a speaker."""

    name: str | None = None
    language: str | None = None
    speaker: str | None = None


class SynthesizeData(msgspec.Struct, frozen=True):
    text: str
    voice: VoiceData | None = None


class StartData(msgspec.Struct, frozen=True):
    voice: VoiceData | None = None


def synthesize_request(data: dict[str, Any]) -> SynthesisRequest:
    """A ``synthesize`` event's data as a request (``BadRequest`` if mistyped)."""
    d = decode(data, SynthesizeData)
    return _request(d.text, d.voice)


def stream_request(data: dict[str, Any]) -> SynthesisRequest:
    """A ``synthesize-start``'s data as the opening of a streamed request: its
    text (None here) follows in ``synthesize-chunk`` pieces."""
    return _request(None, decode(data, StartData).voice)


def _request(text: str | None, voice: VoiceData | None) -> SynthesisRequest:
    v = voice or VoiceData()
    return SynthesisRequest(
        text, v.name, speaker=v.speaker or None, language=v.language
    )


def error_event(exc: RequestError) -> Event:
    """The ``error`` event for a refusal, a bad field under its event name."""
    if isinstance(exc, BadRequest):
        path = WIRE.get(exc.field, exc.field) if exc.field else None
        return Error(text=exc.at(path), code=exc.code).event()
    return Error(text=str(exc), code=exc.code).event()
