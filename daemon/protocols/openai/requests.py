"""The OpenAI audio API's request side: the wire form, errors, SSE framing.

A CreateSpeechRequest body is read by the one typed reader into ``SpeechBody``
(types only) and becomes a ``SynthesisRequest``; the host checks that once,
against the voice's capabilities, before queueing (``daemon.service.edge.requests``).
Errors use OpenAI's envelope ``{"error": {"message", "type", "param", "code"}}``,
which the official SDK maps to its exception classes (docs/clients.md, errors);
``param`` is the body field, and the message starts with it.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, TypeVar

import msgspec
from aiohttp import web
from aiohttp.http_exceptions import ContentEncodingError, HttpProcessingError

from daemon.sdk.cancel import Cancelled
from daemon.service.edge.refusals import BadRequest, RequestError
from daemon.service.edge.requests import SynthesisRequest, decode

T = TypeVar("T")

#: Model ids accepted (stock OpenAI clients send tts-1 / tts-1-hd).
MODELS: Final = ("hexvoice", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
#: OpenAI's transcription model ids: stock clients send them; they select the
#: default ASR model, as ``tts-1`` selects the default voice.
ASR_MODELS: Final = (
    "hexvoice",
    "whisper-1",
    "gpt-4o-transcribe",
    "gpt-4o-mini-transcribe",
)
#: OpenAI's built-in voice names; they select the default voice so stock
#: clients work unchanged (docs/clients.md, speech request).
OPENAI_VOICES: Final = frozenset(
    "alloy ash ballad coral echo fable onyx nova sage shimmer verse marin cedar".split()
)
DEFAULT_FORMAT: Final = "mp3"  # OpenAI's default response_format
#: The body field each ``SynthesisRequest`` field comes from (others: same name).
WIRE: Final = {"text": "input", "format": "response_format"}
#: JSON bodies beyond this are refused (413) before parsing; 4096 characters of
#: input are at most 16 KiB of UTF-8, and the rest of a request is small.
MAX_BODY_BYTES: Final = 256 * 1024
#: How much of a parser's own words a refusal (or a log line) repeats.
_REASON_CHARS: Final = 200


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


#: A model or voice name: empty is refused with the types.
Name = Annotated[str, msgspec.Meta(min_length=1)]


class VoiceId(msgspec.Struct, frozen=True):
    id: Name


class SpeechBody(msgspec.Struct, frozen=True):
    """CreateSpeechRequest as it arrives: types only (values: ``requests.check``)."""

    model: Name
    input: str
    voice: Name | VoiceId
    response_format: str = DEFAULT_FORMAT
    speed: int | float = 1.0
    stream_format: Literal["audio", "sse"] = "audio"
    #: not OpenAI's: reproducible sampling (engines that sample)
    seed: int | None = None
    #: not OpenAI's (Kokoro-FastAPI's ``lang_code``): the language to speak,
    #: for voices that speak several (Qwen3-TTS); checked against the voice's
    language: str | None = None
    #: Not OpenAI's: Kokoro-FastAPI's convention, for clients that want a WAV
    #: whose header carries its real length.
    stream: bool = True
    instructions: str | None = None  # accepted, not used by our engines
    #: Not OpenAI's: IndexTTS-2's emotion knobs and code cap, passed to the
    #: engine as ``SynthesisOptions.extra`` (an engine that takes none of them
    #: refuses them there, naming the field)
    emo_alpha: float | None = None
    emo_vector: list[float] | None = None
    max_mel_tokens: int | None = None


#: SpeechBody fields that travel to the engine as ``extra`` when given
ENGINE_EXTRAS: Final = ("emo_alpha", "emo_vector", "max_mel_tokens")


@dataclass(frozen=True)
class Speech:
    request: SynthesisRequest
    stream_format: str
    stream: bool = True
    """False: one file once synthesis ends (a WAV with its real sizes)."""

    @property
    def fmt(self) -> str:
        assert self.request.format is not None  # always set from the body
        return self.request.format


def parse_speech(body: dict[str, Any]) -> Speech:
    """A CreateSpeechRequest body as a request; ``BadRequest`` names the field."""
    b = decode(body, SpeechBody)
    voice = b.voice.id if isinstance(b.voice, VoiceId) else b.voice
    extra = {k: getattr(b, k) for k in ENGINE_EXTRAS if getattr(b, k) is not None}
    request = SynthesisRequest(
        b.input,
        None if voice in OPENAI_VOICES else voice,
        speed=b.speed,
        seed=b.seed,
        language=b.language,
        format=b.response_format,
        extra=extra,
    )
    return Speech(request, b.stream_format, b.stream)


def model_ids(asr_names: Iterable[str]) -> list[str]:
    """What ``/v1/models`` lists: the speech and transcription model ids, then
    the loaded ASR models' own names."""
    return list(dict.fromkeys([*MODELS, *ASR_MODELS, *sorted(asr_names)]))


def bad_request(exc: BadRequest) -> ApiError:
    """A refused request as OpenAI's 400, the field under its body name."""
    param = WIRE.get(exc.field, exc.field) if exc.field else None
    return ApiError(400, exc.at(param), param, exc.code)


async def json_object(request: web.Request, timeout: float) -> dict[str, Any]:
    """The body as a JSON object; strict UTF-8 (no BOM sniffing of UTF-16/32).

    A body that does not arrive within ``timeout`` seconds is answered 408 and
    the connection closed (the rest of it can no longer be told from a request).
    """
    check_length(request, MAX_BODY_BYTES)
    late = f"request body not received within {timeout:g} s"
    raw = await read_within(request, request.read(), timeout, late)
    try:
        raw.decode("utf-8")  # msgspec says "invalid UTF-8", but not where
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"request body is not UTF-8 (byte {exc.start})") from None
    try:
        body = msgspec.json.decode(raw)
    except msgspec.MsgspecError as exc:  # also "Number out of range" (1e999)
        raise ApiError(400, f"request body is not valid JSON: {exc}") from None
    except RecursionError:  # the decoder recurses per nesting level
        raise ApiError(400, "request body is nested too deeply") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def check_length(request: web.Request, limit: int) -> None:
    """Refuse (413, and close) a body whose Content-Length is past ``limit``
    before any of it is read."""
    declared = request.content_length or 0
    if declared > limit:
        raise too_large("request body", limit, f"a Content-Length of {declared}")


def too_large(name: str, limit: int, found: str = "more") -> ApiError:
    message = f"{name}: expected at most {limit} bytes, found {found}"
    param = name if " " not in name else None
    return ApiError(413, message, param, code="payload_too_large", close=True)


async def read_within(
    request: web.Request, read: Awaitable[T], timeout: float, late: str
) -> T:
    """``read`` (of ``request``'s body) within ``timeout`` seconds: past it a
    408 saying ``late``, and the connection closed; a body the parser cannot
    read, ``payload_error``'s 400."""
    try:
        async with asyncio.timeout(timeout):
            return await read
    except TimeoutError:
        raise ApiError(408, late, code="timeout", close=True) from None
    except web.RequestPayloadError as exc:
        raise payload_error(request, exc) from None


def payload_error(request: web.Request, exc: web.RequestPayloadError) -> ApiError:
    """A body the HTTP parser could not read as sent (invalid gzip/deflate/br
    data, broken chunked framing, shorter than its Content-Length): 400, and
    the connection closed, since where the next request starts is unknown."""
    cause = exc.__cause__
    reason = one_line(
        cause.message if isinstance(cause, HttpProcessingError) else str(exc)
    )
    if isinstance(cause, ContentEncodingError):
        encoding = request.headers.get("Content-Encoding", "")
        message = f"request body: not valid {encoding!r} data ({reason})"
        return ApiError(400, message, code="invalid_content_encoding", close=True)
    return ApiError(
        400, f"request body: unreadable ({reason})", code="invalid_body", close=True
    )


def one_line(reason: object) -> str:
    """A parser's words for a refusal: one line (they may quote the client's
    bytes over several), at most ``_REASON_CHARS``."""
    return " ".join(str(reason).split())[:_REASON_CHARS]


def job_error(exc: Exception) -> ApiError:
    """How a request that failed before its first audio is reported."""
    if isinstance(exc, Cancelled):
        if "deadline" in str(exc):
            return ApiError(504, f"request timed out: {exc}", code="timeout")
        return ApiError(503, f"request cancelled: {exc}", code="cancelled")
    if isinstance(exc, BadRequest):  # an engine refused what it could not declare
        return bad_request(exc)
    assert isinstance(exc, RequestError)
    return ApiError(503, str(exc), code=exc.code)


def sse_delta(data: bytes) -> bytes:
    event = {"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()}
    return f"data: {json.dumps(event)}\n\n".encode()


def sse_done() -> bytes:
    # Token counts mean nothing for a local TTS; the spec wants the object.
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    event = {"type": "speech.audio.done", "usage": usage}
    return f"data: {json.dumps(event)}\n\n".encode()
