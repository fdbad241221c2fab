"""``POST /v1/audio/transcriptions``: an uploaded file through an ASR session.

The order keeps a bad request from ever opening a session (an engine runs one
session at a time; the others wait for it) or reaching the NPU worker:

1. the multipart form is read with its caps (forms.py);
2. ``model`` and ``language`` pick the ASR model (a loaded model's name, or one
   of OpenAI's model ids for the default one);
3. the file's header is read (audio_files.py): refused unless it is audio no
   longer than the cap (the lower of ``limits.max_audio_s`` and the model's
   own ``max_input``), and the request, with the file's rate and channels, goes
   through the one check (``requests.check``);
4. the file is decoded once to find NaN samples or a broken-off stream;
5. only then is the session opened and fed block by block as the file is
   decoded again (each block in a thread), so a long file streams through the
   engine's encoder windows; the transcripts come back meanwhile.

``language`` is a code or upstream's name in any case, and the response names
it as daemon/text/languages.py says.  ``max_new_tokens`` (not OpenAI's: the
SDK sends it in ``extra_body``) is a positive integer passed to the engine,
which holds it to its own bound when the session opens.

Every refusal is OpenAI's error envelope, its ``param`` the form field (``file``
for the audio's rate, channels and length: ``file.sample_rate: expected ...``).
With ``stream=true`` the status line waits for the first transcript, so errors
up to then are still proper 4xx/5xx; one after it is an SSE event carrying the
same envelope (the SDK raises it as ``APIError``).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Sequence
from typing import Final

from aiohttp import web

from daemon.protocols import audio_files
from daemon.protocols.audio_files import AudioFile
from daemon.protocols.openai.forms import Form, read_form
from daemon.protocols.openai.requests import ASR_MODELS, ApiError, job_error
from daemon.protocols.openai.transcripts import (
    RESPONSE_FORMATS,
    Deltas,
    Transcription,
    sse_delta,
    sse_done,
    sse_event,
)
from daemon.sdk.asr import Transcript, stream_text
from daemon.sdk.cancel import Cancelled
from daemon.service.edge.refusals import (
    BadFormat,
    BadRequest,
    BadValue,
    Busy,
    RequestError,
    Unavailable,
    UnknownVoice,
    refuse,
)
from daemon.service.edge.requests import TranscriptionRequest
from daemon.service.host import EngineHost
from daemon.service.scheduling.jobs import AsrJob
from daemon.service.voices.voice import NO_VOICES, Voice

_LOGGER = logging.getLogger(__name__)
#: Where a ``TranscriptionRequest`` field is on the form (the rest: same name).
WIRE: Final = {"voice": "model", **audio_files.FIELDS}
#: A form's integer: ASCII digits only (``int`` also takes "1_000" and "²").
_DIGITS: Final = re.compile(r"[0-9]+")


class Transcriptions:
    """The route's handler (one per app)."""

    def __init__(self, host: EngineHost) -> None:
        self.host = host

    async def handle(self, request: web.Request) -> web.StreamResponse:
        limits = self.host.cfg.limits
        try:
            form = await read_form(request, limits.body_timeout_s)
            fmt, streams = _format(form)
            job, audio = await self._open(form)
        except (ApiError, BadRequest) as exc:
            self.host.metrics.request("http", "bad_request")
            raise _api_error(exc) from None
        except Busy as exc:
            headers = {"Retry-After": str(exc.retry_after)}
            raise ApiError(429, str(exc), code="busy", headers=headers) from None
        except RequestError as exc:  # unavailable: the service, not the request
            raise ApiError(503, str(exc), code=exc.code) from None
        transcripts = _transcripts(self.host, job, audio)
        try:
            if streams:
                return await _sse(request, transcripts)
            try:
                finals = [t async for t in transcripts if t.final]
            except (RequestError, Cancelled) as exc:
                raise _api_error(exc) from None
            return _result(finals, audio, form).response(fmt)
        finally:
            await transcripts.aclose()
            self.host.cancel(job, "client disconnected")  # or done: a no-op

    async def _open(self, form: Form) -> tuple[AsrJob, AudioFile]:
        """Steps 2-5 of the module doc up to an open, checked session."""
        if self.host.state != "ready":
            raise Unavailable(f"service is {self.host.state}")
        f = form.fields
        extra = _extra(form)
        voice = self._model(f.model, f.language)
        cap = self.host.max_audio_s(voice)
        audio = await asyncio.to_thread(audio_files.read_header, form.file, cap)
        asked = TranscriptionRequest(
            voice.name,
            f.language,
            audio.sample_rate,
            audio.channels,
            f.prompt,
            extra=extra,
        )
        self.host.check_session(asked)  # before decoding: header rate, channels
        audio = await asyncio.to_thread(audio_files.scan, audio, cap)
        return self.host.open_session(asked, "http"), audio

    def _model(self, model: str, language: str | None) -> Voice:
        voices = self.host.voices
        if not voices:
            raise Unavailable(NO_VOICES)
        asr = sorted(name for name, v in voices.items() if v.task == "asr")
        if not asr:
            expected = "a speech-recognition model (none is loaded)"
            raise refuse(UnknownVoice, "voice", expected, model)
        if model in asr:
            return voices[model]
        if model in ASR_MODELS:  # the default one (understanding language)
            return self.host.resolve(None, language, "asr")
        expected = f"one of {asr + list(ASR_MODELS)}"
        raise refuse(UnknownVoice, "voice", expected, model)


def _format(form: Form) -> tuple[str, bool]:
    fmt, streams = form.fields.response_format, form.fields.streams
    if fmt not in RESPONSE_FORMATS:
        expected = f"one of {list(RESPONSE_FORMATS)}"
        raise refuse(BadFormat, "response_format", expected, fmt)
    return fmt, streams


def _extra(form: Form) -> dict[str, int]:
    """The engine knobs the form carries: ``max_new_tokens`` (a positive
    integer here; the engine holds it to its own bound when it opens)."""
    value = form.fields.max_new_tokens
    if value is None:
        return {}
    if not _DIGITS.fullmatch(value.strip()) or int(value) < 1:
        raise refuse(BadValue, "max_new_tokens", "a positive integer", value)
    return {"max_new_tokens": int(value)}


def _result(
    finals: Sequence[Transcript], audio: AudioFile, form: Form
) -> Transcription:
    return Transcription(tuple(finals), audio.seconds, form.fields.language)


def _api_error(exc: Exception) -> ApiError:
    """A refusal as OpenAI's envelope, the field under its form name."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, BadRequest):
        path = WIRE.get(exc.field, exc.field) if exc.field else None
        param = path.split(".")[0] if path else None
        return ApiError(400, exc.at(path), param, exc.code)
    return job_error(exc)


async def _transcripts(
    host: EngineHost, job: AsrJob, audio: AudioFile
) -> AsyncIterator[Transcript]:
    """The session's transcripts while the file is fed to it."""
    feeder = asyncio.create_task(_feed(host, job, audio))
    # Read once it ends, whenever that is: a feeder that fails after the
    # consumer left (its cancel raced a feed waking up) is no news to log.
    feeder.add_done_callback(_failure)
    try:
        async for transcript in job:
            yield transcript
        await feeder  # done by now; raises what stopped it, if anything did
    except Cancelled:
        why = _failure(feeder)
        if why is not None:  # the feeder cancelled the session: say why
            raise why from None
        raise
    finally:
        feeder.cancel()


def _failure(task: asyncio.Task[None]) -> BaseException | None:
    return task.exception() if task.done() and not task.cancelled() else None


async def _feed(host: EngineHost, job: AsrJob, audio: AudioFile) -> None:
    blocks = audio_files.blocks(audio)
    try:
        while (block := await asyncio.to_thread(next, blocks, None)) is not None:
            await job.feed(block)
        job.finish()
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        host.cancel(job, f"feeding the file failed: {exc}")
        raise


async def _sse(
    request: web.Request, transcripts: AsyncIterator[Transcript]
) -> web.StreamResponse:
    try:
        first = await anext(transcripts, None)
    except (RequestError, Cancelled) as exc:
        raise _api_error(exc) from None
    resp = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "X-Accel-Buffering": "no",  # proxies must not hold the stream
            "Cache-Control": "no-cache",
        }
    )
    await resp.prepare(request)
    deltas, finals = Deltas(), []

    async def send(t: Transcript) -> None:
        if t.final:
            finals.append(t)
        delta = deltas.push(t)
        if delta:
            await resp.write(sse_delta(delta))

    try:
        if first is not None:
            await send(first)
            async for t in transcripts:
                await send(t)
        await resp.write(sse_done(stream_text(finals)))
    except ConnectionError:  # the client left; handle() cancels the session
        _LOGGER.debug("http client went away mid-transcription")
        return resp
    except (RequestError, Cancelled) as exc:
        _LOGGER.warning("transcription stream aborted: %s", exc)
        await resp.write(sse_event(_api_error(exc).envelope()))
    await resp.write_eof()
    return resp
