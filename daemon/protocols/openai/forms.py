"""``multipart/form-data`` bodies of ``POST /v1/audio/transcriptions`` (and of
``POST /v1/voices``, whose clip arrives the same way).

The body is read part by part (aiohttp's multipart reader), never as a whole,
with a cap per part and for the body: the file at OpenAI's own 25 MB (ecosystem
§2.5), text fields at ``MAX_FIELD_BYTES``.  A body past a cap is answered 413 at
once and its connection closed (the rest of it cannot be told from a next
request); one that stops arriving for ``body_timeout_s`` is answered 408.
Fields are read into ``TranscriptionForm`` by the one typed reader; fields it
does not declare (``temperature``, ``timestamp_granularities[]``, ``include[]``,
``chunking_strategy``, newer ones) are read and ignored, as the speech route
ignores unknown keys.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Final, TypeVar

import msgspec
from aiohttp import BodyPartReader, web

from daemon.engine.requests import Found, MissingField, WrongType, decode, refuse
from daemon.protocols.openai.requests import ApiError, Name
from daemon.protocols.openai.transcripts import DEFAULT_RESPONSE_FORMAT

#: OpenAI's upload limit for a transcription's file (25 MB).
MAX_FILE_BYTES: Final = 25 * 1024 * 1024
#: A text field (a prompt, a language): far above any real one.
MAX_FIELD_BYTES: Final = 64 * 1024
#: Everything but the file together: fields, part headers, ignored parts.
MAX_OTHER_BYTES: Final = 1024 * 1024
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
    fields, file, _ = await read_parts(request, timeout)
    if file is None:
        missing = Found("nothing (missing field)")  # the reader's words
        raise refuse(MissingField, "file", "an audio file", missing)
    return Form(decode(fields, TranscriptionForm), file)


async def read_parts(
    request: web.Request,
    timeout: float,
    files: tuple[str, ...] = ("file",),
    repeated: str | None = None,
) -> tuple[dict[str, str], bytes | None, list[bytes]]:
    """A multipart body's text fields, its file (the first part named one of
    ``files``; None if there is none) and every part named ``repeated`` (more
    files, in order; ``POST /v1/voices``'s ``aux`` clips), read with the caps of
    the module doc (all files together at MAX_FILE_BYTES)."""
    if request.content_type != _MULTIPART:
        found = request.content_type or "no Content-Type"
        raise ApiError(400, f"request body: expected {_MULTIPART}, found {found}")
    if (request.content_length or 0) > MAX_FILE_BYTES + MAX_OTHER_BYTES:
        raise _too_large("request body", MAX_FILE_BYTES + MAX_OTHER_BYTES)
    try:
        reader = await request.multipart()
    except (ValueError, AssertionError) as exc:  # no boundary, bad header
        raise ApiError(400, f"request body: not a multipart form ({exc})") from None
    fields: dict[str, str] = {}
    file: bytes | None = None
    more: list[bytes] = []
    other = taken = 0
    while True:
        part = await _timed(reader.next(), timeout)
        if part is None:
            break
        if not isinstance(part, BodyPartReader):  # a nested multipart
            raise ApiError(400, "request body: nested multipart is not supported")
        name = part.name or ""
        if (name in files and file is None) or (repeated and name == repeated):
            data = await _read_part(part, name, MAX_FILE_BYTES, timeout)
            taken += len(data)
            if taken > MAX_FILE_BYTES:
                raise _too_large("files together", MAX_FILE_BYTES)
            if name in files and file is None:
                file = data
            else:
                more.append(data)
            continue
        data = await _read_part(part, name, MAX_FIELD_BYTES, timeout)
        other += len(data)
        if other > MAX_OTHER_BYTES:
            raise _too_large("form fields", MAX_OTHER_BYTES)
        try:
            fields[name] = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ApiError(
                400, f"{name}: not UTF-8 (byte {exc.start})", param=name
            ) from None
    return fields, file, more


async def _read_part(
    part: BodyPartReader, name: str, limit: int, timeout: float
) -> bytes:
    data = bytearray()
    while chunk := await _timed(part.read_chunk(_CHUNK_BYTES), timeout):
        data += chunk
        if len(data) > limit:
            raise _too_large(name, limit)
    return bytes(data)


async def _timed(step: Awaitable[T], timeout: float) -> T:
    try:
        async with asyncio.timeout(timeout):
            return await step
    except TimeoutError:
        raise ApiError(
            408,
            f"request body stopped arriving for {timeout:g} s",
            code="timeout",
            close=True,
        ) from None


def _too_large(name: str, limit: int) -> ApiError:
    message = f"{name}: expected at most {limit} bytes, found more"
    param = name if " " not in name else None
    return ApiError(413, message, param, code="payload_too_large", close=True)
