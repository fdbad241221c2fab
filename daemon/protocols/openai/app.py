"""OpenAI-compatible HTTP API (aiohttp) on its own Unix socket: the app, its
routes, and the small read-only endpoints.

``POST /v1/audio/speech`` is speech.py, ``/v1/audio/transcriptions``
transcriptions.py, ``/v1/voices`` (cloned voices) voices.py; the edge every
request passes (body limits, codings, OpenAI's error envelope) is edge.py.
Here: ``GET /v1/models`` (the speech and transcription model ids, and the
loaded ASR models' names), ``/v1/audio/models``, ``/v1/audio/voices``,
``/health`` and ``/metrics``.  Every error uses OpenAI's envelope
(``requests.ApiError``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web

from daemon.protocols.openai import edge
from daemon.protocols.openai.forms import MAX_FORM_BYTES
from daemon.protocols.openai.requests import (
    MAX_BODY_BYTES,
    ApiError,
    model_ids,
)
from daemon.protocols.openai.speech import SpeechEndpoint
from daemon.protocols.openai.transcriptions import Transcriptions
from daemon.protocols.openai.voices import Voices
from daemon.service.edge.admission import Acceptor, Admission, Tracked
from daemon.service.host import EngineHost

_LOGGER = logging.getLogger(__name__)
_CREATED: Final = 0  # /v1/models "created": no meaningful timestamp
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
        logger=edge.server_logger(),  # its parser's rejections: edge.py
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
    speech = SpeechEndpoint(host)  # speech.py
    cloned = Voices(host)  # cloned voices (voices.py)
    # Each route refuses an announced body past its own limit before it
    # answers "100 Continue" (edge.expect); the routes that read none take
    # aiohttp's (client_max_size).
    small, upload = edge.expect(MAX_BODY_BYTES), edge.expect(MAX_FORM_BYTES)
    for method, path, handler, expect in [
        ("POST", "/v1/audio/speech", speech.handle, small),
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


@web.middleware
async def _in_flight(request: web.Request, handler: Handler) -> web.StreamResponse:
    busy, transport = request.app[_IN_FLIGHT], request.transport
    busy.add(transport)
    try:
        return await handler(request)
    finally:
        busy.discard(transport)


class _Api:
    """The read-only endpoints: models, voices, health, metrics."""

    def __init__(self, host: EngineHost) -> None:
        self.host = host

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
