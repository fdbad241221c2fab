"""Refusals: the errors a client hears, one class per error code.

A ``BadRequest`` is the request's fault and names its field, what was expected
and what was found (``refuse`` words it: ``speed: expected a number in [0.25,
4.0], found 9``); a ``ServiceError`` is the service's (busy, nothing loaded).
The codes are the same on both protocols (OpenAI's where OpenAI has one); each
protocol maps them to its own status codes and wire field names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.config.wording import shown


class RequestError(Exception):
    """A request failed for a reason the client should hear about."""

    code = "error"


class BadRequest(RequestError):
    """The request itself is wrong: ``field`` (a request field, or None for the
    request as a whole) and a message "expected ..., found ..."."""

    code = "bad_request"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.field = message, field

    def at(self, path: str | None) -> str:
        """The message with the field shown as ``path`` (a protocol's name)."""
        return f"{path}: {self.message}" if path else self.message

    def __str__(self) -> str:
        return self.at(self.field)


class MissingField(BadRequest):
    code = "missing_required_parameter"


class WrongType(BadRequest):
    code = "invalid_type"


class EmptyText(BadRequest):
    code = "empty_input"


class BadText(BadRequest):
    code = "invalid_text"


class TextTooLong(BadRequest):
    code = "string_above_max_length"


class UnknownVoice(BadRequest):
    code = "voice_not_found"


class UnknownSpeaker(BadRequest):
    code = "unknown_speaker"


class UnknownLanguage(BadRequest):
    code = "unsupported_language"


class BadValue(BadRequest):
    """A number out of its range (speed, seed, sample rate, channels)."""

    code = "invalid_value"


class BadFormat(BadRequest):
    code = "unsupported_format"


def refuse(
    kind: type[BadRequest], name: str | None, expected: str, found: Any
) -> BadRequest:
    """``kind("expected <expected>, found <found>", name)``; ``found`` is quoted
    (``repr``, shortened as the reader does) unless it is a ``Found``."""
    text = found.text if isinstance(found, Found) else shown(found)
    return kind(f"expected {expected}, found {text}", name)


@dataclass(frozen=True)
class Found:
    """A found value described in words ("a NUL character at position 5")."""

    text: str


class ServiceError(RequestError):
    """The service, not the request, refuses it (busy, nothing loaded)."""


class Busy(ServiceError):
    code = "busy"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(ServiceError):
    code = "unavailable"
