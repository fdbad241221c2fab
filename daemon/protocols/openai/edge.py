"""The HTTP edge around every handler: what is refused before a body is read,
errors as OpenAI's envelope, and what aiohttp logs about malformed requests.

- ``Content-Encoding``: aiohttp's parser decodes gzip, deflate, br and zstd (or
  refuses one itself, 400, when its decoder is not installed) and hands any
  other coding on as raw bytes, which a handler would then misread: those are
  refused 415 (RFC 9110 §15.5.16) before the body is read.  A body that is not
  valid data of its coding is ``requests.payload_error``'s 400.
- ``expect(limit)``, each route's ``Expect`` handler: the coding and the
  declared length (the route's own body limit) are checked before ``100
  Continue`` is sent, so a client announcing 10 GB is refused 413 before it
  sends a byte of it (aiohttp's default handler always continues).  aiohttp
  runs it before any middleware, so it answers for itself.
- ``errors``: every refusal as OpenAI's envelope, aiohttp's own 404/405/413
  too; one that leaves the rest of a body unread closes the connection.
- ``SERVER_LOGGER``: the logger aiohttp's protocol uses for our server,
  given as ``AppRunner(logger=...)``, an option its web protocol documents.
  A request its parser rejects (request line, headers, chunk framing) is the
  client's fault: aiohttp logs it as an ERROR with a traceback, which our
  filter turns into one INFO line through the client-log limiter.  Anything
  else, a handler's own failure among it, keeps its traceback.  A filter on our
  own logger, not on the global ``aiohttp.server``, leaves any other aiohttp
  server in the process alone and needs no subclass of aiohttp's protocol.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import HttpVersion11, hdrs, web
from aiohttp.http import HttpProcessingError

from daemon.protocols.openai.requests import (
    ApiError,
    check_length,
    one_line,
    payload_error,
)
from daemon.service.edge.clientlog import CLIENT_LOG

#: Passed to aiohttp's web protocol (``AppRunner(logger=...)``).
SERVER_LOGGER: Final = logging.getLogger(f"{__name__}.server")
#: Codings aiohttp's parser handles itself (decodes, or refuses with its 400
#: when the decoder is not installed); "" is a header without a value.
PARSED_CODINGS: Final = frozenset({"", "identity", "gzip", "deflate", "br", "zstd"})
#: What a 415 offers instead (RFC 9110 §12.5.3): the codings zlib always reads.
ACCEPTED_CODINGS: Final = "gzip, deflate"
_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ExpectHandler = Callable[[web.Request], Awaitable[web.StreamResponse | None]]


def check_coding(request: web.Request) -> None:
    """Refuse (415) a body in a coding aiohttp would pass on undecoded."""
    coding = request.headers.get(hdrs.CONTENT_ENCODING)
    if coding is None or not request.body_exists:
        return
    if coding.isascii() and coding.strip().lower() in PARSED_CODINGS:
        return
    raise ApiError(
        415,
        f"Content-Encoding: expected one of {ACCEPTED_CODINGS}, br, zstd or "
        f"identity, found {coding!r}",
        code="unsupported_content_encoding",
        headers={hdrs.ACCEPT_ENCODING: ACCEPTED_CODINGS},
        close=True,
    )


def expect(limit: int) -> ExpectHandler:
    """A route's ``Expect`` handler: its body limit is ``limit`` bytes."""

    async def handle(request: web.Request) -> web.StreamResponse | None:
        value = request.headers.get(hdrs.EXPECT, "")
        try:
            check_coding(request)
            check_length(request, limit)
            if value.strip().lower() != "100-continue":
                raise ApiError(
                    417,
                    f"Expect: expected 100-continue, found {value!r}",
                    code="expectation_failed",
                    close=True,
                )
        except ApiError as exc:
            return await answer(request, exc)
        if request.version == HttpVersion11:  # HTTP/1.0 has no 100 (RFC 9110)
            await request.writer.write(_CONTINUE)
            # As aiohttp's own handler does: the response proper is yet to come.
            request.writer.output_size = 0
        return None

    return handle


async def answer(request: web.Request, exc: ApiError) -> web.StreamResponse:
    """``exc`` as the response; with ``exc.close``, sent and the connection
    closed at once rather than aiohttp lingering (10 s) to read a body for it."""
    resp = exc.response()
    if exc.close and request.transport is not None:
        await resp.prepare(request)
        await resp.write_eof()
        request.transport.close()
    return resp


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        check_coding(request)
        return await handler(request)
    except ApiError as exc:
        return await answer(request, exc)
    except web.RequestPayloadError as exc:  # a body read by no reader of ours
        return await answer(request, payload_error(request, exc))
    except web.HTTPException as exc:  # 404, 405, 413 from aiohttp itself
        if exc.status < 400:
            raise
        code = exc.reason.lower().replace(" ", "_")
        # A body no handler read (404, 405) or read only in part (413).
        unread = request.body_exists and not request.content.is_eof()
        error = ApiError(exc.status, exc.text or exc.reason, code=code, close=unread)
        return await answer(request, error)


class _ClientFaults(logging.Filter):
    """aiohttp's record of a request its parser rejected becomes one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, HttpProcessingError):
            return True  # ours, or no exception: as logged
        kind = type(exc).__name__
        CLIENT_LOG.log(
            SERVER_LOGGER,
            kind,
            min(record.levelno, logging.INFO),  # aiohttp's DEBUG ones stay DEBUG
            "http client sent a malformed request (%s): %s",
            kind,
            one_line(exc.message),
        )
        return False


def server_logger() -> logging.Logger:
    """The logger to hand aiohttp's server, with the filter that turns a
    malformed request's record into one rate-limited line (installed on
    first use, once: importing this module changes no logger)."""
    if not any(isinstance(f, _ClientFaults) for f in SERVER_LOGGER.filters):
        SERVER_LOGGER.addFilter(_ClientFaults())
    return SERVER_LOGGER
