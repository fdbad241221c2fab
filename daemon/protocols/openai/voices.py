"""``/v1/voices``: cloned voices over HTTP (not an OpenAI route; OpenAI's shapes).

- ``POST /v1/voices``: ``multipart/form-data`` with the clip in ``file`` (or
  ``audio``), ``name``, optional ``transcript``, ``language`` (the clip's),
  ``model`` (the loaded voice, or engine id, to clone with; default: the first
  that clones), ``consent`` (the caller's statement that the speaker agreed;
  required by engines whose licence asks for it and under
  ``voice_store.require_consent``, stored with the print and listed) and
  ``aux`` files (more clips of the same voice, for engines that average them:
  GPT-SoVITS).  The order keeps
  a bad request off the NPU worker: the form (caps of forms.py), the name, the
  engine, the clip's header (no audio decoded for a clip that is too long or no
  audio), the decoded clip (too short, NaN, silence), then the registration as a
  queued job (service/cloning/clones.py; its checks: clone_rules.py).  201 with
  the stored voice; a name whose stored file is damaged is registered over it.
- ``GET /v1/voices``: every stored voice, with ``available`` (and ``reason``
  when a loaded engine cannot speak it, or its file is damaged) and
  ``verified`` (its file's checksum matched; false for files written before
  checksums).
- ``DELETE /v1/voices/NAME``: removes one, damaged or not (OpenAI's ``{"id",
  "object", "deleted": true}``).

Refusals are OpenAI's envelope: 400 for the request (``param`` the form field),
404 for an unknown name, 409 for a name taken or a full store (with
``x-should-retry: false``: the SDK would retry a 409), 413 for an upload past
25 MB, 429 busy, 503 when the store cannot be written.  Speech with a stored
voice that cannot speak (``VoiceUnusable``) is a 409 too: the request is well
formed and the service works; the stored voice is in a state its owner fixes
(registers it again, or deletes it), after which the same request succeeds.
"""

from __future__ import annotations

import asyncio
from typing import Final

import msgspec
import numpy as np
from aiohttp import web

from daemon.protocols import audio_files
from daemon.protocols.openai.forms import read_parts
from daemon.protocols.openai.requests import ApiError, job_error
from daemon.sdk.asr import downmix
from daemon.sdk.cancel import Cancelled
from daemon.service.cloning.clone_rules import (
    StoreFull,
    VoiceExists,
    VoiceUnusable,
)
from daemon.service.edge.refusals import (
    BadRequest,
    BadValue,
    Busy,
    Found,
    MissingField,
    RequestError,
    UnknownVoice,
    refuse,
)
from daemon.service.edge.requests import decode
from daemon.service.host import EngineHost

#: Multipart fields the clip may arrive in: OpenAI's ``file``; ``audio`` as
#: GPT-SoVITS-style APIs name it.
FILE_FIELDS: Final = ("file", "audio")
#: Multipart field of the more clips of the voice (repeatable).
AUX_FIELD: Final = "aux"
#: Where a refused field is on the form (the clip's facts are the file's).
WIRE: Final = {"audio": "file", **audio_files.FIELDS}
_NO_RETRY: Final = {"x-should-retry": "false"}


class VoiceForm(msgspec.Struct, frozen=True):
    """The registration's text fields (strings; others are ignored)."""

    name: str
    transcript: str | None = None
    model: str | None = None
    language: str | None = None
    consent: str | None = None


class Voices:
    """The routes' handlers (one per app)."""

    def __init__(self, host: EngineHost) -> None:
        self.host = host

    async def create(self, request: web.Request) -> web.Response:
        clones = self.host.clones
        try:
            timeout = self.host.cfg.limits.body_timeout_s
            text = VoiceForm.__struct_fields__
            fields, data, extra = await read_parts(
                request, timeout, text, FILE_FIELDS, AUX_FIELD
            )
            form = decode(fields, VoiceForm)
            clones.check_name(form.name)
            if data is None:
                missing = Found("nothing (missing field)")
                raise refuse(MissingField, "file", "an audio clip", missing)
            _, cloning = clones.cloner(form.model)
            if len(extra) > cloning.max_aux:  # before any of them is decoded
                expected = f"at most {cloning.max_aux} aux clip(s)"
                raise refuse(BadValue, "aux", expected, Found(f"{len(extra)}"))
            pcm, rate = await asyncio.to_thread(_clip, data, cloning.max_seconds)
            aux = [
                await asyncio.to_thread(_clip, a, cloning.max_seconds, f"aux[{i}]")
                for i, a in enumerate(extra)
            ]
            voice = await clones.add(
                form.name, pcm, rate, form.transcript, form.model, "http",
                form.language, aux, form.consent,
            )  # fmt: skip
        except (ApiError, BadRequest, RequestError, Cancelled) as exc:
            if isinstance(exc, BadRequest | ApiError):
                self.host.metrics.request("http", "bad_request")
            raise api_error(exc) from None
        body = next(v for v in clones.listing() if v["id"] == voice.name)
        return web.json_response(body, status=201)

    async def list(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": self.host.clones.listing()})

    async def delete(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        try:
            await self.host.clones.remove(name)
        except (BadRequest, RequestError) as exc:
            raise api_error(exc) from None
        return web.json_response({"id": name, "object": "voice", "deleted": True})


def _clip(
    data: bytes, max_seconds: float, field: str | None = None
) -> tuple[np.ndarray, int]:
    """The uploaded clip as float32 mono and its rate, refused (``BadRequest``,
    field ``file``, or ``field`` for an aux clip) as an upload to the
    transcriptions route is: no audio, a truncated file, NaN samples, longer
    than ``max_seconds`` (told from the header first)."""
    try:
        header = audio_files.read_header(data, max_seconds)
        audio = audio_files.scan(header, max_seconds)
    except BadRequest as exc:
        if field is None:
            raise
        raise type(exc)(exc.message, field) from None
    blocks = list(audio_files.blocks(audio))
    pcm = downmix(np.concatenate(blocks)) if blocks else np.zeros(0, np.float32)
    return np.ascontiguousarray(pcm, np.float32), audio.sample_rate


def api_error(exc: Exception) -> ApiError:
    """A refusal as OpenAI's envelope, the field under its form name."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, UnknownVoice):
        return ApiError(404, str(exc), "name", exc.code, _NO_RETRY)
    if isinstance(exc, BadRequest):
        path = WIRE.get(exc.field, exc.field) if exc.field else None
        param = path.split(".")[0] if path else None
        return ApiError(400, exc.at(path), param, exc.code)
    if isinstance(exc, VoiceExists | StoreFull | VoiceUnusable):
        param = {VoiceExists: "name", VoiceUnusable: "voice"}.get(type(exc))
        return ApiError(409, str(exc), param, exc.code, _NO_RETRY)
    if isinstance(exc, Busy):
        headers = {"Retry-After": str(exc.retry_after)}
        return ApiError(429, str(exc), code="busy", headers=headers)
    return job_error(exc)
