"""What a cloned voice's registration must satisfy before it is queued: its
name, its clip, its transcript, its consent statement; the errors that say
which one failed (the service's own codes; protocols map them to their status
codes); and the refusal of a request for a stored voice that cannot speak."""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.sdk.cloning import AuxClips, Cloning
from daemon.service.edge.refusals import (
    BadRequest,
    BadValue,
    Found,
    MissingField,
    RequestError,
    ServiceError,
    UnknownLanguage,
    refuse,
)
from daemon.text.tags import speaks

#: A clip whose loudest sample is below this (-60 dBFS) holds no voice to copy.
SILENT_PEAK: Final = 1e-3
#: A consent statement is one person's words about one clip: a few sentences,
#: not a document (the store keeps it beside the print and lists it).
MAX_CONSENT_CHARS: Final = 1000
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


class VoiceUnusable(RequestError):
    """A request names a stored cloned voice that cannot speak (its file is
    damaged, or no loaded bundle speaks its print).  Neither the request nor
    the service is at fault, and asking again changes nothing: whoever owns the
    voice fixes it (registers it again, or deletes it).  HTTP 409, Wyoming
    ``error`` with this code."""

    code = "voice_unusable"


def fix(name: str) -> str:
    """How the owner of a stored voice ``name`` replaces or drops it."""
    return (
        f"register it again under the same name (POST /v1/voices, or "
        f"`hexvoice voice add {name}`) or delete it (DELETE /v1/voices/{name}, "
        f"or `hexvoice voice rm {name}`)"
    )


def damaged(name: str, reason: str) -> VoiceUnusable:
    return VoiceUnusable(
        f"voice: the stored cloned voice {name!r} is damaged ({reason}); {fix(name)}"
    )


def unfit(name: str, reason: str, stale: bool) -> VoiceUnusable:
    """``stale``: a bundle of its engine is loaded, but made with another
    encoder (registering it again fits it to that one); else no bundle of its
    engine is loaded (it speaks again once one is)."""
    if stale:
        return VoiceUnusable(
            f"voice: the stored cloned voice {name!r} does not fit the loaded "
            f"bundles ({reason}); {fix(name)}"
        )
    return VoiceUnusable(
        f"voice: the stored cloned voice {name!r} is not offered now ({reason}); "
        f"it is again once such a bundle is loaded, or delete it (DELETE "
        f"/v1/voices/{name}, or `hexvoice voice rm {name}`)"
    )


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


def check_consent(text: str | None, required: bool) -> str | None:
    """The caller's statement that the clip's speaker agreed to be cloned:
    stored with the print and listed with the voice.  ``required``: the engine
    or ``voice_store.require_consent`` asks for one (without it, nothing is
    queued and nothing stored)."""
    text = " ".join(text.split()) if text else None
    if required and not text:
        missing = Found("nothing (missing field)")
        expected = "a statement that the clip's speaker consents to being cloned"
        raise refuse(MissingField, "consent", expected, missing)
    if text is not None and len(text) > MAX_CONSENT_CHARS:
        expected = f"at most {MAX_CONSENT_CHARS} characters"
        raise refuse(BadValue, "consent", expected, Found(f"{len(text)} characters"))
    if text is not None and not text.isprintable():
        expected = "printable text"
        raise refuse(BadValue, "consent", expected, Found("control characters"))
    return text
