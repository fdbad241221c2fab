"""Talking to the running service's HTTP socket, as ``hexvoice transcribe`` and
``hexvoice voice`` do: one request, its answer, or why there is none.

``socket``: a Unix socket path, or an ``http://HOST:PORT`` URL for a
``tcp_http`` listener.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Container
from typing import Any, Final

from daemon.cli.errors import CommandError
from daemon.service.config import DEFAULT_RUNTIME_DIR

DEFAULT_SOCKET: Final = str(DEFAULT_RUNTIME_DIR / "http.sock")
CONNECT_TIMEOUT_S: Final = 5.0


async def call(
    socket: str,
    method: str,
    path: str,
    data: Any = None,
    *,
    command: str,
    read_timeout: float,
    ok: Container[int],
) -> str:
    """``method path`` (with body ``data``: bytes, or an ``aiohttp.FormData``)
    through ``socket``; the answer's body if its status is in ``ok``, else
    ``CommandError`` with the service's reason (``command`` names who asked)."""
    import aiohttp

    if "://" in socket:
        connector, base = aiohttp.TCPConnector(), socket.rstrip("/")
    else:
        connector, base = aiohttp.UnixConnector(path=socket), "http://localhost"
    timeout = aiohttp.ClientTimeout(sock_connect=CONNECT_TIMEOUT_S, total=read_timeout)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as s:
            async with s.request(method, f"{base}{path}", data=data) as resp:
                body = await resp.text()
                if resp.status not in ok:
                    raise CommandError(refusal(resp.status, body))
                return body
    except (aiohttp.ClientConnectorError, asyncio.TimeoutError) as exc:
        raise CommandError(
            f"cannot reach hexvoice at {socket}: {exc or type(exc).__name__} "
            "(is `hexvoice serve` running?)"
        ) from None
    except aiohttp.ClientError as exc:  # connected, but no HTTP answer came
        # The usual cause: the Wyoming socket, which answers the request line
        # with an error event (not an HTTP status) and hangs up.
        raise CommandError(
            f"{socket} does not answer HTTP ({type(exc).__name__}): {command} "
            "talks to the service's HTTP socket (http.sock), not its Wyoming one"
        ) from None


def refusal(status: int, body: str) -> str:
    """An HTTP refusal in words: the service's message (OpenAI's envelope),
    else the raw body."""
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body.strip() or "no details"
    return f"service error (HTTP {status}): {message}"
