"""What a cloned voice's registration must satisfy before it is queued: its
name, its clip, its transcript; and the errors that say which one failed (the
service's own codes; protocols map them to their status codes)."""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.engine.cloning import AuxClips, Cloning
from daemon.engine.requests import (
    BadRequest,
    BadValue,
    Found,
    MissingField,
    RequestError,
    UnknownLanguage,
    refuse,
    speaks,
)
from daemon.service.jobs import ServiceError

#: A clip whose loudest sample is below this (-60 dBFS) holds no voice to copy.
SILENT_PEAK: Final = 1e-3
#: OpenAI's own voice names select the default voice (protocols/openai): a
#: cloned voice by such a name could never be asked for.
RESERVED: Final = frozenset(
    "alloy ash ballad coral echo fable onyx nova sage shimmer verse marin cedar".split()
)


class BadName(BadRequest):
    code = "invalid_voice_name"


class NoCloning(BadRequest):
    code = "cloning_unavailable"


class NotCloned(BadRequest):
    code = "not_a_cloned_voice"


class SilentClip(BadRequest):
    code = "invalid_audio"


class VoiceExists(RequestError):
    code = "voice_exists"


class StoreFull(RequestError):
    code = "voice_store_full"


class StoreUnavailable(ServiceError):
    code = "voice_store_unavailable"


def check_clip(
    audio: np.ndarray, rate: int, cloning: Cloning, field: str = "audio"
) -> None:
    seconds = len(audio) / rate
    if seconds < cloning.min_seconds:
        expected = f"at least {cloning.min_seconds:g} s of audio"
        raise refuse(BadValue, field, expected, Found(f"{seconds:.2f} s"))
    if seconds > cloning.max_seconds:
        expected = f"at most {cloning.max_seconds:g} s of audio"
        raise refuse(BadValue, field, expected, Found(f"{seconds:.2f} s"))
    peak = float(np.max(np.abs(audio))) if len(audio) else 0.0
    if peak < SILENT_PEAK:
        db = 20 * np.log10(peak) if peak > 0 else -np.inf
        found = Found(f"silence (peak {db:.0f} dBFS)")
        raise refuse(SilentClip, field, "a clip of someone speaking", found)


def check_aux(aux: AuxClips, cloning: Cloning) -> None:
    """More clips of the voice: at most ``max_aux``, each held to the main
    clip's rules (the engine's static graphs take no longer one)."""
    if len(aux) > cloning.max_aux:
        expected = f"at most {cloning.max_aux} aux clip(s)"
        raise refuse(BadValue, "aux", expected, Found(f"{len(aux)}"))
    for i, (audio, rate) in enumerate(aux):
        check_clip(audio, rate, cloning, f"aux[{i}]")


def check_language(language: str | None, languages: tuple[str, ...]) -> str | None:
    """The clip's language, one the cloning voice speaks (None: its choice)."""
    language = language.strip() if language else None
    if language is not None and not speaks(languages, language):
        expected = f"one of {list(languages)}"
        raise refuse(UnknownLanguage, "language", expected, language)
    return language


def check_transcript(text: str | None, cloning: Cloning) -> str | None:
    text = text.strip() if text else None
    if cloning.transcript == "required" and not text:
        missing = Found("nothing (missing field)")
        raise refuse(MissingField, "transcript", "the clip's transcript", missing)
    return text
