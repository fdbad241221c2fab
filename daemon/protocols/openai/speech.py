"""``POST /v1/audio/speech``: OpenAI's speech endpoint.

``wav``/``pcm`` stream as the engine yields audio: the status line and
headers wait for the first chunk, so failures before any audio still get a
proper OpenAI error (400/429/503/504), and the first audio bytes leave with
them.  ``flac``/``mp3``/``opus``, and ``wav``/``pcm`` with ``"stream": false``
(or over HTTP/1.0), are one file encoded after synthesis; the response header
``X-Hexvoice-Streaming`` says which (``during-synthesis``/``after-synthesis``),
and the engine is told (``SynthesisOptions.streamed``).  ``stream_format:
"sse"`` sends the same bytes as server-sent events.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from typing import Final

import numpy as np
from aiohttp import HttpVersion11, web

from daemon.protocols.openai import encoders as encode
from daemon.protocols.openai.requests import (
    ApiError,
    Speech,
    bad_request,
    job_error,
    json_object,
    parse_speech,
    sse_delta,
    sse_done,
)
from daemon.protocols.openai.voices import api_error
from daemon.sdk.audio.shaping import to_int16
from daemon.sdk.cancel import Cancelled
from daemon.service.cloning.clone_rules import VoiceUnusable
from daemon.service.edge.refusals import BadRequest, Busy, RequestError
from daemon.service.host import EngineHost
from daemon.service.scheduling.jobs import Job

_LOGGER = logging.getLogger(__name__)
#: How ``/v1/audio/speech`` delivers its audio: as the engine yields it, or
#: encoded once synthesis is over (flac/mp3/opus always, their headers carry the
#: length; wav/pcm when the request says ``"stream": false`` or is HTTP/1.0).
STREAMING_HEADER: Final = "X-Hexvoice-Streaming"
DURING_SYNTHESIS: Final = {STREAMING_HEADER: "during-synthesis"}
AFTER_SYNTHESIS: Final = {STREAMING_HEADER: "after-synthesis"}


class SpeechEndpoint:
    """``POST /v1/audio/speech`` on one host."""

    def __init__(self, host: EngineHost) -> None:
        self.host = host

    async def handle(self, request: web.Request) -> web.StreamResponse:
        received = time.monotonic()
        try:
            body = await json_object(request, self.host.cfg.limits.body_timeout_s)
            req = parse_speech(body)
            formats = encode.available_formats()
            asked = replace(req.request, streamed=_streams(req, request))
            job = self.host.submit(asked, "http", formats)
        except (ApiError, BadRequest) as exc:
            self.host.metrics.request("http", "bad_request")
            if isinstance(exc, BadRequest):
                raise bad_request(exc) from None
            raise
        except Busy as exc:
            headers = {"Retry-After": str(exc.retry_after)}
            raise ApiError(429, str(exc), code="busy", headers=headers) from None
        except VoiceUnusable as exc:  # a stored voice its owner fixes: 409
            raise api_error(exc) from None
        except RequestError as exc:  # unavailable: the service, not the request
            raise ApiError(503, str(exc), code=exc.code) from None
        try:
            return await self._respond(request, req, job, received)
        finally:
            # Client gone (aiohttp cancels the handler), write failed, or done.
            self.host.cancel(job, "client disconnected")

    async def _respond(
        self, request: web.Request, req: Speech, job: Job, received: float
    ) -> web.StreamResponse:
        chunks = job.__aiter__()
        try:
            first = await anext(chunks, None)
        except (RequestError, Cancelled) as exc:
            raise job_error(exc) from None
        native = job.voice.sample_rate
        rate = encode.output_rate(req.fmt, native)
        resampler = encode.resampler(native, req.fmt)
        fmt = encode.FORMATS[req.fmt]
        if not _streams(req, request):
            audio = [resampler.push(first.audio)] if first is not None else []
            try:
                async for c in chunks:
                    audio.append(resampler.push(c.audio))
            except (RequestError, Cancelled) as exc:
                raise job_error(exc) from None
            audio.append(resampler.push(np.zeros(0, np.float32), last=True))
            body = await asyncio.to_thread(
                encode.encode_file, req.fmt, np.concatenate(audio), rate
            )
            self.host.metrics.first_audio("http", time.monotonic() - received)
            if req.stream_format == "sse":
                return await self._sse(request, [body])
            headers = {"Content-Type": fmt.content_type, **AFTER_SYNTHESIS}
            return web.Response(body=body, headers=headers)
        sse = req.stream_format == "sse"
        resp = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream" if sse else fmt.content_type,
                "X-Accel-Buffering": "no",  # proxies must not hold the stream
                "Cache-Control": "no-cache",
                **DURING_SYNTHESIS,
            }
        )
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        head = encode.wav_header(rate) if req.fmt == "wav" else b""

        async def send(data: bytes) -> None:
            if data:
                await resp.write(sse_delta(data) if sse else data)

        await send(head + (to_int16(resampler.push(first.audio)) if first else b""))
        self.host.metrics.first_audio("http", time.monotonic() - received)
        try:
            async for c in chunks:
                await send(to_int16(resampler.push(c.audio)))
        except ConnectionError:  # the client left; handle() cancels the job
            _LOGGER.debug("http client went away mid-stream")
            return resp
        except (RequestError, Cancelled) as exc:
            # Headers are gone: break the stream so the client sees a failure
            # instead of a short, well-formed file.
            _LOGGER.warning("http stream aborted: %s", exc)
            if request.transport is not None:
                request.transport.abort()
            return resp
        await send(to_int16(resampler.push(np.zeros(0, np.float32), last=True)))
        if sse:
            await resp.write(sse_done())
        await resp.write_eof()
        return resp

    async def _sse(
        self, request: web.Request, bodies: list[bytes]
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", **AFTER_SYNTHESIS}
        )
        await resp.prepare(request)
        for b in bodies:
            await resp.write(sse_delta(b))
        await resp.write(sse_done())
        await resp.write_eof()
        return resp


def _streams(req: Speech, request: web.Request) -> bool:
    """Whether the audio leaves as it is synthesized: a streamable format, not
    ``"stream": false``, and HTTP/1.1 (1.0 has no chunked encoding: such a
    client gets the whole file)."""
    fmt = encode.FORMATS.get(req.fmt)
    streamable = fmt is not None and fmt.streams
    return streamable and req.stream and request.version >= HttpVersion11
