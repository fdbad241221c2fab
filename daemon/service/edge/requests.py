"""Requests as the service checks them: one type per task, one check.

A protocol parses its wire form into a ``SynthesisRequest`` (TTS) or a
``TranscriptionRequest`` (ASR); the host picks the voice and calls ``check``
with that voice's declared ``Capabilities`` before anything is queued.  Nothing
downstream checks these fields again.  (An engine may still refuse what no
declaration can say, e.g. text its phonemizer cannot read; the host reports
that as a ``BadRequest`` too.)

Every refusal (refusals.py) names the request field it is about, what was
expected and what was found: ``speed: expected a number in [0.25, 4.0], found
9``.  A protocol shows the field under its own wire name (``BadRequest.at``):
``input`` on HTTP for ``text``, ``voice.speaker`` on Wyoming for ``speaker``.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import msgspec

from daemon.config.reader import ReadError, read
from daemon.sdk.asr import TranscriptionOptions
from daemon.sdk.capabilities import Capabilities
from daemon.sdk.cloning import VoicePrint
from daemon.sdk.tts import SynthesisOptions
from daemon.service.edge.refusals import (
    BadFormat,
    BadText,
    BadValue,
    EmptyText,
    Found,
    MissingField,
    TextTooLong,
    UnknownLanguage,
    UnknownSpeaker,
    UnknownVoice,
    WrongType,
    refuse,
)
from daemon.text.tags import described, speaks

T = TypeVar("T")

#: Channels a transcription request may carry: from mono up to 7.1 surround.
#: (qwen-asr's ``to_mono`` also takes at most 8 channels as frames' width.)
MAX_ASR_CHANNELS: Final = 8
#: Input rates a transcription request may carry (Hz): telephone-band 8 kHz up
#: to studio 192 kHz; engines resample (soxr) to their own rate.
MIN_ASR_RATE: Final = 8000
MAX_ASR_RATE: Final = 192000
#: The reader's ``where``: a protocol's message starts at the field path instead.
_WHERE: Final = "request"


@dataclass(frozen=True)
class SynthesisRequest:
    """One text-to-speech request, whichever protocol it came by."""

    #: None: the opening of a streamed text, whose pieces follow
    text: str | None
    #: a voice name; None: the one speaking ``language``, else the default
    voice: str | None = None
    speaker: str | None = None
    speed: float = 1.0
    seed: int | None = None
    language: str | None = None
    #: the encoding asked for (HTTP ``response_format``); None: raw PCM
    format: str | None = None
    #: one piece of a streamed text: may be blank, and the stream cuts its length
    piece: bool = False
    #: engine-specific knobs, passed through to ``SynthesisOptions.extra``
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: ``SynthesisOptions.streamed``: set by the protocol that knows
    streamed: bool = True

    def options(
        self, voice: str | None, voice_print: VoicePrint | None = None
    ) -> SynthesisOptions:
        """What the engine is given once the request passed ``check``
        (``voice``: the chosen voice; None: the engine's default;
        ``voice_print``: a cloned voice's, spoken through ``voice``)."""
        return SynthesisOptions(
            voice=voice,
            voice_print=voice_print,
            speaker=self.speaker,
            seed=self.seed,
            speed=self.speed,
            language=self.language,
            streamed=self.streamed,
            extra=self.extra,
        )


@dataclass(frozen=True)
class TranscriptionRequest:
    """One speech-to-text request: the audio's shape is announced up front."""

    #: a model (voice) name; None: the one understanding ``language``, else default
    voice: str | None = None
    language: str | None = None
    sample_rate: int = 16000
    channels: int = 1
    #: text that steers the transcript (names, spelling), if the engine takes one
    prompt: str | None = None
    #: engine-specific knobs (``max_new_tokens``), passed through to
    #: ``TranscriptionOptions.extra``; the engine checks them when it opens
    extra: Mapping[str, Any] = field(default_factory=dict)

    def options(self, voice: str | None) -> TranscriptionOptions:
        """What the engine is given once the request passed ``check``."""
        return TranscriptionOptions(
            voice=voice, language=self.language, prompt=self.prompt, extra=self.extra
        )


Request = SynthesisRequest | TranscriptionRequest


def check(
    request: Request,
    caps: Capabilities,
    *,
    max_chars: float = math.inf,
    formats: Collection[str] = (),
) -> None:
    """Refuse ``request`` (a ``BadRequest``) unless ``caps`` admit every field.

    The one place requests are checked.  ``max_chars`` is the service's own
    text limit (the lower of it and the engine's ``max_input`` applies);
    ``formats`` are the encodings the protocol can produce, when it encodes.
    """
    if isinstance(request, TranscriptionRequest):
        _check_transcription(request, caps)
        return
    if caps.task != "tts":
        raise refuse(UnknownVoice, "voice", "a text-to-speech voice", request.voice)
    if request.text is not None:
        limit = min(caps.max_input, max_chars)
        _check_text(request.text, limit, blank_ok=request.piece)
    _check_speaker(request.speaker, caps.speakers)
    _check_language(request.language, caps.languages)
    _check_speed(request.speed, caps.speed_range)
    _check_seed(request.seed)
    if formats and request.format is not None and request.format not in formats:
        raise refuse(BadFormat, "format", f"one of {sorted(formats)}", request.format)


def decode(data: Any, type_: type[T]) -> T:
    """A protocol's wire mapping as ``type_`` (a ``msgspec.Struct``), read by
    the one typed reader; ``WrongType``/``MissingField`` name the wire path.

    Keys ``type_`` does not declare are ignored, at every level: both protocols
    let clients send fields of newer versions (Wyoming ``context``, OpenAI
    ``instructions``) without failing.
    """
    try:
        return read(_declared(data, type_), type_, where=_WHERE)
    except ReadError as exc:
        message = str(exc).removeprefix(f"{_WHERE}: ")
        path, sep, rest = message.partition(": ")
        if not sep or path.startswith("expected"):
            path, rest = "", message
        missing = rest.endswith("found nothing (missing field)")
        kind = MissingField if missing else WrongType
        raise kind(rest, path or None) from None


def _declared(data: Any, tp: Any) -> Any:
    """``data`` without the keys the Struct ``tp`` (or a Struct in a union
    ``tp``) does not declare, recursively."""
    if not isinstance(data, Mapping):
        return data
    structs = [
        t
        for t in (typing.get_args(tp) or (tp,))
        if isinstance(t, type) and issubclass(t, msgspec.Struct)
    ]
    if not structs:
        return data
    hints = typing.get_type_hints(structs[0])
    known = {f.encode_name: hints[f.name] for f in msgspec.structs.fields(structs[0])}
    return {k: _declared(v, known[k]) for k, v in data.items() if k in known}


def _check_text(text: str, limit: float, blank_ok: bool) -> None:
    # A NUL ends a C string: phonemizers and tokenizers behind ctypes would
    # silently drop what follows it, or choke on it.
    at = text.find("\x00")
    if at >= 0:
        found = Found(f"a NUL character (U+0000) at position {at}")
        raise refuse(BadText, "text", "text without NUL characters", found)
    if not text.strip() and not blank_ok:
        raise refuse(EmptyText, "text", "text to speak", text)
    if len(text) > limit:  # a streamed piece: the stream cuts it (never above)
        found = Found(f"{len(text)}")
        raise refuse(TextTooLong, "text", f"at most {limit:g} characters", found)


def _check_speaker(speaker: str | None, speakers: tuple[str, ...]) -> None:
    if not speaker:
        return
    if not speakers:
        expected = "no speaker (the voice has a single speaker)"
        raise refuse(UnknownSpeaker, "speaker", expected, speaker)
    if speaker not in speakers:
        raise refuse(UnknownSpeaker, "speaker", f"one of {list(speakers)}", speaker)


def _check_language(language: str | None, languages: tuple[str, ...]) -> None:
    if language is not None and not speaks(languages, language):
        expected = described(languages)
        raise refuse(UnknownLanguage, "language", expected, language)


def _check_speed(speed: Any, span: tuple[float, float] | None) -> None:
    lo, hi = span or (1.0, 1.0)
    number = isinstance(speed, int | float) and not isinstance(speed, bool)
    if number and math.isfinite(speed) and lo <= speed <= hi:
        return
    expected = f"a number in [{lo}, {hi}]" if span else "1.0 (a fixed speed)"
    raise refuse(BadValue, "speed", expected, speed)


def _check_seed(seed: Any) -> None:
    if seed is None:
        return
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise refuse(BadValue, "seed", "a non-negative integer", seed)


def _check_transcription(request: TranscriptionRequest, caps: Capabilities) -> None:
    if caps.task != "asr":
        raise refuse(UnknownVoice, "voice", "a speech-recognition model", request.voice)
    _check_language(request.language, caps.languages)
    rates = caps.sample_rates_in
    rate = request.sample_rate
    if rates:
        ok, expected = rate in rates, f"one of {list(rates)}"
    else:
        ok = MIN_ASR_RATE <= rate <= MAX_ASR_RATE
        expected = f"an integer rate in [{MIN_ASR_RATE}, {MAX_ASR_RATE}] Hz"
    if not _integer(rate) or not ok:
        raise refuse(BadValue, "sample_rate", expected, rate)
    channels = request.channels
    if not _integer(channels) or not 1 <= channels <= MAX_ASR_CHANNELS:
        expected = f"an integer number of channels in [1, {MAX_ASR_CHANNELS}]"
        raise refuse(BadValue, "channels", expected, channels)
    if request.prompt is not None:
        _check_text(request.prompt, math.inf, blank_ok=True)


def check_duration(seconds: float, limit: float) -> None:
    """Refuse audio of ``seconds`` when it is longer than ``limit`` (the lower of
    the service's ``limits.max_audio_s`` and the engine's ``max_input``)."""
    if seconds > limit:
        found = Found(f"{seconds:.2f} s")
        raise refuse(BadValue, "audio", f"at most {limit:g} s of audio", found)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
