"""OpenAI-compatible HTTP API (aiohttp) on its own Unix socket.

``POST /v1/audio/speech`` streams ``wav``/``pcm`` as the engine yields audio: the
status line and headers wait for the first chunk, so failures before any audio
still get a proper OpenAI error (400/429/503/504), and the first audio bytes
leave with them.  ``flac``/``mp3``/``opus``, and ``wav``/``pcm`` with
``"stream": false``, are one file encoded after synthesis; the response header
``X-Hexvoice-Streaming`` says which (``during-synthesis``/``after-synthesis``),
and the engine is told (``SynthesisOptions.streamed``).
``POST /v1/audio/transcriptions`` is transcriptions.py, ``/v1/voices`` (cloned
voices) voices.py.  Also ``GET /v1/models``
(the speech and transcription model ids, and the loaded ASR models' names),
``/v1/audio/models``, ``/v1/audio/voices``, ``/health`` and ``/metrics``.  Every
error uses OpenAI's envelope (``requests.ApiError``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Final

import numpy as np
from aiohttp import HttpVersion11, web

from daemon.protocols.openai import edge
from daemon.protocols.openai import encoders as encode
from daemon.protocols.openai.forms import MAX_FORM_BYTES
from daemon.protocols.openai.requests import (
    MAX_BODY_BYTES,
    ApiError,
    Speech,
    bad_request,
    job_error,
    json_object,
    model_ids,
    parse_speech,
    sse_delta,
    sse_done,
)
from daemon.protocols.openai.transcriptions import Transcriptions
from daemon.protocols.openai.voices import Voices, api_error
from daemon.sdk.audio.shaping import to_int16
from daemon.sdk.cancel import Cancelled
from daemon.service.cloning.clone_rules import VoiceUnusable
from daemon.service.edge.admission import Acceptor, Admission, Tracked
from daemon.service.edge.refusals import BadRequest, Busy, RequestError
from daemon.service.host import EngineHost
from daemon.service.scheduling.jobs import Job

_LOGGER = logging.getLogger(__name__)
_CREATED: Final = 0  # /v1/models "created": no meaningful timestamp
#: How ``/v1/audio/speech`` delivers its audio: as the engine yields it, or
#: encoded once synthesis is over (flac/mp3/opus always, their headers carry the
#: length; wav/pcm when the request says ``"stream": false`` or is HTTP/1.0).
STREAMING_HEADER: Final = "X-Hexvoice-Streaming"
DURING_SYNTHESIS: Final = {STREAMING_HEADER: "during-synthesis"}
AFTER_SYNTHESIS: Final = {STREAMING_HEADER: "after-synthesis"}
#: Transports with a request in flight (the rest are idle keep-alive ones).
_IN_FLIGHT: Final = web.AppKey("in_flight", set)
#: Answer to a connection past ``limits.max_connections`` when none is idle.
_REFUSAL_BODY: Final = json.dumps(
    ApiError(
        503, "too many connections; retry shortly", code="too_many_connections"
    ).envelope()
).encode()
REFUSAL: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: application/json\r\n"
    b"Content-Length: %d\r\n"
    b"Retry-After: 1\r\n"
    b"Connection: close\r\n\r\n" % len(_REFUSAL_BODY)
) + _REFUSAL_BODY


async def start(
    host: EngineHost,
    socks: list[socket.socket],
    admission: Admission,
    shutdown_timeout: float,
) -> tuple[web.AppRunner, list[Acceptor]]:
    """Serve the app on ``socks`` through ``admission``; (runner, acceptors).

    ``runner.cleanup()`` ends the connections; each acceptor's ``stop()`` ends
    accepting on its socket.
    """
    app = make_app(host)
    # handler_cancellation: a client that hangs up cancels its handler, which
    # cancels its synthesis.  keepalive_timeout runs from connect (and from the
    # end of each response) until the next request header is complete.
    runner = web.AppRunner(
        app,
        handler_cancellation=True,
        access_log=None,
        logger=edge.SERVER_LOGGER,  # its parser's rejections: edge.py
        shutdown_timeout=shutdown_timeout,
        keepalive_timeout=host.cfg.limits.idle_timeout_s,
    )
    await runner.setup()
    loop = asyncio.get_running_loop()
    in_flight = app[_IN_FLIGHT]

    async def begin(conn: socket.socket) -> Tracked:
        transport, _ = await loop.connect_accepted_socket(runner.server, sock=conn)
        return Tracked(transport, lambda: transport not in in_flight, transport.close)

    return runner, [admission.serve(s, begin, REFUSAL) for s in socks]


def make_app(host: EngineHost) -> web.Application:
    app = web.Application(
        client_max_size=MAX_BODY_BYTES, middlewares=[_in_flight, edge.errors]
    )
    app[_IN_FLIGHT] = set()
    api = _Api(host)
    cloned = Voices(host)  # cloned voices (voices.py)
    # Each route refuses an announced body past its own limit before it
    # answers "100 Continue" (edge.expect); the routes that read none take
    # aiohttp's (client_max_size).
    small, upload = edge.expect(MAX_BODY_BYTES), edge.expect(MAX_FORM_BYTES)
    for method, path, handler, expect in [
        ("POST", "/v1/audio/speech", api.speech, small),
        ("POST", "/v1/audio/transcriptions", Transcriptions(host).handle, upload),
        ("GET", "/v1/models", api.models, small),
        ("GET", "/v1/audio/models", api.audio_models, small),
        ("GET", "/v1/audio/voices", api.voices, small),
        ("POST", "/v1/voices", cloned.create, upload),
        ("GET", "/v1/voices", cloned.list, small),
        ("DELETE", "/v1/voices/{name}", cloned.delete, small),
        ("GET", "/health", api.health, small),
        ("GET", "/metrics", api.metrics, small),
    ]:
        if method == "GET":  # with HEAD, as before
            app.router.add_get(path, handler, expect_handler=expect)
        else:
            app.router.add_route(method, path, handler, expect_handler=expect)
    return app


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _streams(req: Speech, request: web.Request) -> bool:
    """Whether the audio leaves as it is synthesized: a streamable format, not
    ``"stream": false``, and HTTP/1.1 (1.0 has no chunked encoding: such a
    client gets the whole file)."""
    fmt = encode.FORMATS.get(req.fmt)
    streamable = fmt is not None and fmt.streams
    return streamable and req.stream and request.version >= HttpVersion11


@web.middleware
async def _in_flight(request: web.Request, handler: Handler) -> web.StreamResponse:
    busy, transport = request.app[_IN_FLIGHT], request.transport
    busy.add(transport)
    try:
        return await handler(request)
    finally:
        busy.discard(transport)


class _Api:
    def __init__(self, host: EngineHost) -> None:
        self.host = host

    async def speech(self, request: web.Request) -> web.StreamResponse:
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
        except ConnectionError:  # the client left; speech() cancels the job
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

    def _model_ids(self) -> list[str]:
        return model_ids(n for n, v in self.host.voices.items() if v.task == "asr")

    async def models(self, request: web.Request) -> web.Response:
        data = [
            {"id": m, "object": "model", "created": _CREATED, "owned_by": "hexvoice"}
            for m in self._model_ids()
        ]
        return web.json_response({"object": "list", "data": data})

    async def audio_models(self, request: web.Request) -> web.Response:
        return web.json_response({"models": [{"id": m} for m in self._model_ids()]})

    async def voices(self, request: web.Request) -> web.Response:
        voices = [
            {
                "id": v.name,
                "name": v.name,
                "languages": list(v.languages),
                "cloned": v.print is not None,
                # what the engine says of the voice, e.g. Qwen3-TTS's measured
                # SNR of streamed audio against upstream's decode
                "description": v.description,
            }
            for v in self.host.voices.values()
            if v.task == "tts"  # the speech endpoint's voices, not ASR models
        ]
        return web.json_response({"voices": voices, "default": self.host.default_voice})

    async def health(self, request: web.Request) -> web.Response:
        healthy, why = self.host.health()
        ok = healthy and self.host.ready
        body = {
            "status": "ok" if ok else "unavailable",
            "state": self.host.state,
            "worker": why,
            "backend": self.host.status,
            "voices": sorted(self.host.voices),
            "queue_depth": self.host.depth(),
            "reload": self.host.reload,
            "changes": self.host.changes,  # of the last load or reload
            "engines": self.host.engines(),
        }
        return web.json_response(body, status=200 if ok else 503)

    async def metrics(self, request: web.Request) -> web.Response:
        body, content_type = self.host.metrics.exposition(request.headers.get("Accept"))
        return web.Response(body=body, headers={"Content-Type": content_type})
