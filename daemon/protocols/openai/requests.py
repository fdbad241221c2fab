"""The OpenAI audio API's request side: validation, errors, SSE framing.

Errors use OpenAI's envelope ``{"error": {"message", "type", "param", "code"}}``,
which the official SDK maps to its exception classes (ecosystem.md §2.4).
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web

from daemon.engine.cancel import Cancelled
from daemon.engine.fields import expected
from daemon.engine.tts import SynthesisOptions
from daemon.protocols.openai import encoders as encode
from daemon.service.host import EngineHost
from daemon.service.jobs import BadRequest, BadText, ServiceError, Voice, check_text

#: Model ids accepted (stock OpenAI clients send tts-1 / tts-1-hd).
MODELS: Final = ("hexvoice", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
#: OpenAI's built-in voice names; they select the default voice so stock
#: clients work unchanged (ecosystem.md §2.1).
OPENAI_VOICES: Final = frozenset(
    "alloy ash ballad coral echo fable onyx nova sage shimmer verse marin cedar".split()
)
DEFAULT_FORMAT: Final = "mp3"  # OpenAI's default response_format
STREAM_FORMATS: Final = ("audio", "sse")


class ApiError(Exception):
    """An HTTP error answered with OpenAI's error envelope."""

    def __init__(
        self,
        status: int,
        message: str,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        close: bool = False,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
        self.headers = headers or {}
        self.close = close  # the connection cannot carry another request

    def envelope(self) -> dict[str, Any]:
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        if self.status == 429:
            kind = "rate_limit_error"
        return {
            "error": {
                "message": self.message,
                "type": kind,
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self) -> web.Response:
        resp = web.json_response(
            self.envelope(), status=self.status, headers=self.headers
        )
        if self.close:
            resp.force_close()
        return resp


@dataclass(frozen=True)
class SpeechRequest:
    text: str
    voice: Voice
    fmt: str
    stream_format: str
    options: SynthesisOptions
    stream: bool = True
    """False: one file once synthesis ends (a WAV with its real sizes)."""


def parse_speech(body: dict[str, Any], host: EngineHost) -> SpeechRequest:
    """Validate a CreateSpeechRequest; ``ApiError`` (400) names the field."""
    model = field_(body, "model", str)
    text = field_(body, "input", str)
    voice_field = body.get("voice")
    if isinstance(voice_field, dict):
        voice_field = voice_field.get("id")
    if not isinstance(voice_field, str) or not voice_field:
        raise ApiError(400, "'voice' must be a voice name or {\"id\": name}", "voice")
    fmt = field_(body, "response_format", str, DEFAULT_FORMAT)
    speed = field_(body, "speed", (int, float), 1.0)
    stream_format = field_(body, "stream_format", str, "audio")
    seed = field_(body, "seed", int, None)
    # Not OpenAI's: Kokoro-FastAPI's convention, for clients that want a WAV
    # whose header carries its real length.
    stream = field_(body, "stream", bool, True)
    field_(body, "instructions", str, None)  # accepted, not used by our engines
    if not model:
        raise ApiError(400, "'model' must not be empty", "model")
    if not text.strip():
        raise ApiError(400, "'input' is empty", "input", "empty_input")
    try:
        check_text(text)
    except BadText as exc:
        raise ApiError(400, f"'input': {exc}", "input", exc.code) from None
    limit = host.cfg.limits.max_input_chars
    if len(text) > limit:
        raise ApiError(
            400,
            f"'input' is too long ({len(text)} characters; max {limit}).",
            "input",
            "string_above_max_length",
        )
    if fmt not in encode.available_formats():
        known = (
            "not available on this machine"
            if fmt in encode.KNOWN_FORMATS
            else "unknown"
        )
        raise ApiError(
            400,
            f"response_format {fmt[:20]!r} is {known}; use one of "
            f"{list(encode.available_formats())}",
            "response_format",
            "unsupported_format",
        )
    if stream_format not in STREAM_FORMATS:
        raise ApiError(
            400, f"stream_format must be one of {STREAM_FORMATS}", "stream_format"
        )
    name = None if voice_field in OPENAI_VOICES else voice_field
    try:
        voice = host.resolve(name)
    except BadRequest as exc:
        raise ApiError(400, str(exc), "voice", exc.code) from None
    except ServiceError as exc:  # no voice loaded: the service, not the request
        raise ApiError(503, str(exc), code=exc.code) from None
    try:
        options = SynthesisOptions(voice=voice.name, seed=seed, speed=float(speed))
    except ValueError as exc:
        param = "speed" if "speed" in str(exc) else "seed"
        raise ApiError(400, str(exc), param, "invalid_value") from None
    return SpeechRequest(text, voice, fmt, stream_format, options, stream)


async def json_object(request: web.Request, timeout: float) -> dict[str, Any]:
    """The body as a JSON object; strict UTF-8 (no BOM sniffing of UTF-16/32).

    A body that does not arrive within ``timeout`` seconds is answered 408 and
    the connection closed (the rest of it can no longer be told from a request).
    """
    try:
        async with asyncio.timeout(timeout):
            raw = await request.read()
    except TimeoutError:
        raise ApiError(
            408,
            f"request body not received within {timeout:g} s",
            code="timeout",
            close=True,
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"request body is not UTF-8 (byte {exc.start})") from None
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from None
    except RecursionError:  # the C decoder recurses per nesting level
        raise ApiError(400, "request body is nested too deeply") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def field_(body: dict[str, Any], key: str, typ: Any, default: Any = ...) -> Any:
    """``body[key]`` checked against ``typ`` (a bool is only a bool here)."""
    if key not in body or body[key] is None:
        if default is ...:
            raise ApiError(
                400, f"'{key}' is required", key, "missing_required_parameter"
            )
        return default
    v = body[key]
    types = typ if isinstance(typ, tuple) else (typ,)
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
        raise ApiError(
            400,
            f"'{key}' must be {expected(types)}, got {type(v).__name__}",
            key,
            "invalid_type",
        )
    return v


def job_error(exc: Exception) -> ApiError:
    """How a request that failed before its first audio is reported."""
    if isinstance(exc, Cancelled):
        if "deadline" in str(exc):
            return ApiError(504, f"request timed out: {exc}", code="timeout")
        return ApiError(503, f"request cancelled: {exc}", code="cancelled")
    assert isinstance(exc, ServiceError)
    status = 400 if isinstance(exc, BadRequest) else 503
    return ApiError(status, str(exc), code=exc.code)


def sse_delta(data: bytes) -> bytes:
    event = {"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()}
    return f"data: {json.dumps(event)}\n\n".encode()


def sse_done() -> bytes:
    # Token counts mean nothing for a local TTS; the spec wants the object.
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    event = {"type": "speech.audio.done", "usage": usage}
    return f"data: {json.dumps(event)}\n\n".encode()
