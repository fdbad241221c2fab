"""Wyoming's request side: ``synthesize`` and ``synthesize-start`` data as
``SynthesisRequest``\\ s, ``transcribe`` + ``audio-start`` data as a
``TranscriptionRequest``, ``audio-chunk`` payloads as samples, and refusals as
``error`` events.

The event data is read by the one typed reader (types only); the host checks
the request once, against the voice's capabilities, before queueing
(``daemon.service.edge.requests``).  Wyoming carries no speed or format: those stay
at their defaults.  A ``synthesize`` event may carry a ``seed`` beside its text
(not Wyoming's: hexvoice's, as HTTP's ``seed``), so a sampling engine says the
same thing twice; without one each request draws its own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

import msgspec
import numpy as np
from wyoming.error import Error
from wyoming.event import Event

from daemon.service.edge.refusals import (
    BadRequest,
    BadValue,
    Found,
    RequestError,
    refuse,
)
from daemon.service.edge.requests import SynthesisRequest, TranscriptionRequest, decode

#: The event field each ``SynthesisRequest`` field comes from (others: same name).
WIRE: Final = {
    "voice": "voice.name",
    "speaker": "voice.speaker",
    "language": "voice.language",
}
#: The same for a ``TranscriptionRequest`` (``transcribe`` and ``audio-start``).
ASR_WIRE: Final = {"voice": "name", "sample_rate": "rate"}
#: Sample width (bytes) the audio events may carry: s16le, as every Wyoming
#: microphone and satellite sends (Home Assistant: 16 kHz / 16-bit / mono).
SAMPLE_WIDTH: Final = 2
#: Full scale of a 16-bit sample: int16 / 32768 lies in [-1, 1).
INT16_SCALE: Final = 32768.0


class VoiceData(msgspec.Struct, frozen=True):
    """``SynthesizeVoice``: a name (overrides language), a language, a speaker."""

    name: str | None = None
    language: str | None = None
    speaker: str | None = None


class SynthesizeData(msgspec.Struct, frozen=True):
    text: str
    voice: VoiceData | None = None
    #: not Wyoming's: reproducible sampling (its range: the one request check)
    seed: int | None = None


class StartData(msgspec.Struct, frozen=True):
    voice: VoiceData | None = None


class TranscribeData(msgspec.Struct, frozen=True):
    """``transcribe``: the model's name and the language (both optional);
    ``context``, VAD sensitivity and bias terms are not used."""

    name: str | None = None
    language: str | None = None


class AudioFormat(msgspec.Struct, frozen=True):
    """``audio-start`` / ``audio-chunk`` data: the PCM's format."""

    rate: int
    width: int
    channels: int


def transcribe_data(data: dict[str, Any]) -> TranscribeData:
    """A ``transcribe`` event's data (``BadRequest`` if mistyped)."""
    return decode(data, TranscribeData)


def audio_format(data: dict[str, Any]) -> AudioFormat:
    """An audio event's format (``BadRequest`` if missing, mistyped, or not
    16-bit samples)."""
    f = decode(data, AudioFormat)
    if f.width != SAMPLE_WIDTH:
        expected = f"{SAMPLE_WIDTH} (16-bit samples)"
        raise refuse(BadValue, "width", expected, f.width)
    return f


def transcription_request(
    asked: TranscribeData | None, f: AudioFormat
) -> TranscriptionRequest:
    """What ``transcribe`` (if one came) and ``audio-start`` ask for."""
    t = asked or TranscribeData()
    return TranscriptionRequest(
        t.name or None, t.language or None, sample_rate=f.rate, channels=f.channels
    )


def chunk_samples(opened: AudioFormat, got: AudioFormat, payload: bytes) -> np.ndarray:
    """An ``audio-chunk``'s s16le payload as float32 ``[n, channels]`` (``[n]``
    for mono); its format must be audio-start's."""
    for name in ("rate", "width", "channels"):
        want, found = getattr(opened, name), getattr(got, name)
        if want != found:
            raise refuse(BadValue, name, f"{want} (as in audio-start)", found)
    frame = got.width * got.channels
    if len(payload) % frame:
        found = Found(f"{len(payload)} bytes")
        expected = f"whole frames of {frame} bytes ({got.channels} x 16-bit)"
        raise refuse(BadValue, "payload", expected, found)
    pcm = np.frombuffer(payload, "<i2").astype(np.float32) / INT16_SCALE
    return pcm if got.channels == 1 else pcm.reshape(-1, got.channels)


def synthesize_request(data: dict[str, Any]) -> SynthesisRequest:
    """A ``synthesize`` event's data as a request (``BadRequest`` if mistyped).
    Not streamed: its client takes the audio whole (Home Assistant writes one
    file of it), unlike a ``synthesize-start`` stream's, played as it comes."""
    d = decode(data, SynthesizeData)
    return replace(_request(d.text, d.voice), seed=d.seed, streamed=False)


def stream_request(data: dict[str, Any]) -> SynthesisRequest:
    """A ``synthesize-start``'s data as the opening of a streamed request: its
    text (None here) follows in ``synthesize-chunk`` pieces."""
    return _request(None, decode(data, StartData).voice)


def _request(text: str | None, voice: VoiceData | None) -> SynthesisRequest:
    v = voice or VoiceData()
    return SynthesisRequest(
        text, v.name, speaker=v.speaker or None, language=v.language
    )


def error_event(exc: RequestError, wire: dict[str, str] = WIRE) -> Event:
    """The ``error`` event for a refusal, a bad field under its event name."""
    if isinstance(exc, BadRequest):
        path = wire.get(exc.field, exc.field) if exc.field else None
        return Error(text=exc.at(path), code=exc.code).event()
    return Error(text=str(exc), code=exc.code).event()
