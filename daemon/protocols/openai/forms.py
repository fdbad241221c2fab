"""``multipart/form-data`` bodies of ``POST /v1/audio/transcriptions`` (and of
``POST /v1/voices``, whose clip arrives the same way).

The body is read part by part (aiohttp's multipart reader), never as a whole, with a cap
per part and for the body: the file at OpenAI's own 25 MB (docs/clients.md,
transcriptions), text fields at ``MAX_FIELD_BYTES``.  A body past a cap is answered 413
at once and its connection closed (the rest of it cannot be told from a next request);
one that stops arriving for ``body_timeout_s`` is answered 408, and one the multipart
reader cannot parse (no or a wrong boundary, cut short, bad part headers) 400.  Each
declared field is one part of its kind: a file part (with a filename) for the file, a
text part for the rest, and at most once; a second one, or one of the other kind, is
refused naming the field.  Text fields are read into ``TranscriptionForm`` by the one
typed reader; fields it does not declare (``temperature``,
``timestamp_granularities[]``, ``include[]``, ``chunking_strategy``, newer ones) are
read and ignored, repeated or not, as the speech route ignores unknown keys.
"""

from __future__ import annotations

from collections.abc import Awaitable, Collection
from dataclasses import dataclass
from typing import Final, TypeVar

import msgspec
from aiohttp import BodyPartReader, web
from aiohttp.http import HttpProcessingError

from daemon.protocols.openai.requests import (
    ApiError,
    Name,
    check_length,
    one_line,
    read_within,
    too_large,
)
from daemon.protocols.openai.transcripts import DEFAULT_RESPONSE_FORMAT
from daemon.service.edge.refusals import Found, MissingField, WrongType, refuse
from daemon.service.edge.requests import decode

#: OpenAI's upload limit for a transcription's file (25 MB).
MAX_FILE_BYTES: Final = 25 * 1024 * 1024
#: A text field (a prompt, a language): far above any real one.
MAX_FIELD_BYTES: Final = 64 * 1024
#: Everything but the file together: fields, part headers, ignored parts.
MAX_OTHER_BYTES: Final = 1024 * 1024
#: A whole form (its declared Content-Length is checked before any is read).
MAX_FORM_BYTES: Final = MAX_FILE_BYTES + MAX_OTHER_BYTES
#: What aiohttp's multipart reader raises for a malformed form: ValueError (no
#: or a wrong boundary, a body that ends early, a bad part Content-Length, an
#: undecodable ``_charset_``), AssertionError (its own checks of part framing),
#: RuntimeError (an oversized ``_charset_`` part), HttpProcessingError (part
#: headers: too many, too long, malformed).
_MALFORMED: Final = (ValueError, AssertionError, RuntimeError, HttpProcessingError)
#: Bytes taken from the socket per read while a part streams in.
_CHUNK_BYTES: Final = 64 * 1024
_MULTIPART: Final = "multipart/form-data"
#: How a multipart form spells a boolean (the SDK and curl send "true").
_BOOLS: Final = {"true": True, "false": False, "1": True, "0": False}
T = TypeVar("T")


class TranscriptionForm(msgspec.Struct, frozen=True):
    """CreateTranscriptionRequest's text fields as they arrive (strings)."""

    model: Name
    language: str | None = None
    prompt: str | None = None
    response_format: str = DEFAULT_RESPONSE_FORMAT
    stream: str = "false"
    #: not OpenAI's: the most tokens an autoregressive model may decode
    max_new_tokens: str | None = None

    @property
    def streams(self) -> bool:
        """``stream`` as a boolean (``WrongType`` names the field)."""
        value = _BOOLS.get(self.stream.strip().lower())
        if value is None:
            raise refuse(WrongType, "stream", "true or false", self.stream)
        return value


@dataclass(frozen=True)
class Form:
    fields: TranscriptionForm
    file: bytes


async def read_form(request: web.Request, timeout: float) -> Form:
    """The form's fields and file; ``ApiError`` (400/408/413) or ``BadRequest``."""
    text = TranscriptionForm.__struct_fields__
    fields, file, _ = await read_parts(request, timeout, text)
    if file is None:
        missing = Found("nothing (missing field)")  # the reader's words
        raise refuse(MissingField, "file", "an audio file", missing)
    return Form(decode(fields, TranscriptionForm), file)


async def read_parts(
    request: web.Request,
    timeout: float,
    text: Collection[str],
    files: tuple[str, ...] = ("file",),
    repeated: str | None = None,
) -> tuple[dict[str, str], bytes | None, list[bytes]]:
    """A multipart body's ``text`` fields, its file (the one part named one of
    ``files``; None if there is none) and every part named ``repeated`` (more
    files, in order; ``POST /v1/voices``'s ``aux`` clips), read with the caps of
    the module doc (all files together at MAX_FILE_BYTES); other parts are read
    and ignored."""
    if request.content_type != _MULTIPART:
        found = request.content_type or "no Content-Type"
        raise ApiError(400, f"request body: expected {_MULTIPART}, found {found}")
    check_length(request, MAX_FORM_BYTES)
    try:
        reader = await request.multipart()
    except (ValueError, AssertionError) as exc:  # no boundary, bad header
        raise ApiError(400, f"request body: not a multipart form ({exc})") from None
    fields: dict[str, str] = {}
    file: bytes | None = None
    more: list[bytes] = []
    other = taken = 0
    while (part := await _step(request, reader.next(), timeout)) is not None:
        if not isinstance(part, BodyPartReader):  # a nested multipart
            raise ApiError(400, "request body: nested multipart is not supported")
        name = part.name or ""
        is_file = name in files or name == repeated
        if (is_file or name in text) and is_file != (part.filename is not None):
            raise _wrong_kind(name, part.filename)
        if (name in files and file is not None) or name in fields:
            raise _twice(name, files if name in files else (name,))
        limit = MAX_FILE_BYTES if is_file else MAX_FIELD_BYTES
        data = await _read_part(request, part, name, limit, timeout)
        if is_file:
            taken += len(data)
            if taken > MAX_FILE_BYTES:
                raise too_large("files together", MAX_FILE_BYTES)
            if name == repeated:
                more.append(data)
            else:
                file = data
            continue
        other += len(data)
        if other > MAX_OTHER_BYTES:
            raise too_large("form fields", MAX_OTHER_BYTES)
        if name in text:
            fields[name] = _utf8(name, data)
    return fields, file, more


async def _read_part(
    request: web.Request, part: BodyPartReader, name: str, limit: int, timeout: float
) -> bytes:
    data = bytearray()
    while chunk := await _step(request, part.read_chunk(_CHUNK_BYTES), timeout):
        data += chunk
        if len(data) > limit:
            raise too_large(name, limit)
    return bytes(data)


async def _step(request: web.Request, step: Awaitable[T], timeout: float) -> T:
    """One read of the multipart reader, its failures as the client's."""
    late = f"request body stopped arriving for {timeout:g} s"
    try:
        return await read_within(request, step, timeout, late)
    except _MALFORMED as exc:
        message = f"request body: not a valid multipart form ({one_line(exc)})"
        raise ApiError(400, message, code="invalid_multipart", close=True) from None


def _utf8(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            400, f"{name}: not UTF-8 (byte {exc.start})", param=name
        ) from None


def _wrong_kind(name: str, filename: str | None) -> ApiError:
    if filename is None:
        message = (
            f"{name}: expected a file (a part with a filename), found a text field"
        )
    else:
        message = f"{name}: expected a text field, found a file ({filename!r})"
    return ApiError(400, message, name, code="invalid_type")


def _twice(name: str, names: tuple[str, ...]) -> ApiError:
    """A second part for a field given once (``names``: the field's spellings)."""
    what = "the field" if len(names) == 1 else f"one of the fields {list(names)}"
    message = f"{name}: expected {what} once, found a second one"
    return ApiError(400, message, name, code="duplicate_parameter")
