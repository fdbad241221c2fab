"""Floods a client can cause cost the log a line per kind, then a count.

The service is a real ``hexvoice serve``; the floods are raw Unix-socket
clients (what a broken or hostile client is): HTTP requests aiohttp's parser
rejects, and Wyoming connections that start an event header and stall past
``limits.header_timeout_s``.  Each kind of fault is logged once at once, then
held (``daemon.service.edge.clientlog``); the service's stop says how many were
held.  A fault of our own still logs its traceback (in-process server with
the service's HTTP edge).
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import aiohttp
from aiohttp import web

from daemon.protocols.openai import edge
from daemon.service.edge.clientlog import CLIENT_LOG
from tests.daemon.conftest import start_daemon

FLOOD = 30
#: Short, so the stalled Wyoming headers time out within a second.
HEADER_TIMEOUT_S = 0.5
TIMEOUT_S = 10.0
#: Two kinds of malformed HTTP (aiohttp's BadStatusLine and LineTooLong).
BAD_VERSION = b"GET /health HTTP/9.9\r\n\r\n"
LONG_HEADER = b"GET /health HTTP/1.1\r\nX: " + b"a" * 10_000 + b"\r\n\r\n"
STALLED = b'{"type": "synthesize"'  # no newline: the header never ends


async def _until_closed(path: Path, data: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    try:
        writer.write(data)
        async with asyncio.timeout(TIMEOUT_S):
            return await reader.read()
    finally:
        writer.close()


async def _flood(http: Path, wyoming: Path) -> list[bytes]:
    sends = [(http, BAD_VERSION if i % 2 else LONG_HEADER) for i in range(FLOOD)]
    sends += [(wyoming, STALLED)] * FLOOD
    return await asyncio.gather(*(_until_closed(p, d) for p, d in sends))


def _held(line: str) -> int:
    m = re.search(r"\((\d+) similar suppressed in the last [\d.]+ s\)$", line)
    return int(m.group(1)) if m else 0


def test_floods_are_one_line_per_kind_then_a_count(tmp_path, test_voice):
    d = start_daemon(
        tmp_path / "d", test_voice, limits={"header_timeout_s": HEADER_TIMEOUT_S}
    )
    try:
        before = d.log.stat().st_size
        answers = asyncio.run(_flood(d.http, d.wyoming))
        assert all(a.startswith(b"HTTP/1.0 400") for a in answers[:FLOOD])
        assert all(b"not complete within" in a for a in answers[FLOOD:])
        during = d.stderr()[before:]
    finally:
        assert d.stop() == 0
    log = d.stderr()[before:]
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
    kinds = {
        "BadStatusLine": "(BadStatusLine)",
        "LineTooLong": "(LineTooLong)",
        "wyoming": "wyoming client: event header not complete",
    }
    for kind, mark in kinds.items():
        # One line while the flood lasted (the window is 10 s) ...
        assert sum(mark in ln for ln in during.splitlines()) == 1, (kind, during)
        lines = [ln for ln in log.splitlines() if mark in ln]
        # ... and what was held, said once, with its count, when it stopped.
        flooded = FLOOD if kind == "wyoming" else FLOOD // 2
        assert len(lines) == 2 and _held(lines[1]) == flooded - 1, (kind, lines)


async def _serve_edge(sock: Path) -> list[int]:
    """An app with the service's edge (middleware, protocol logger) and a
    route with a bug; (status of the bug, statuses of malformed requests)."""

    async def bug(request: web.Request) -> web.Response:
        raise RuntimeError("a bug of ours")

    app = web.Application(middlewares=[edge.errors])
    app.router.add_get("/bug", bug)
    runner = web.AppRunner(app, logger=edge.server_logger(), access_log=None)
    await runner.setup()
    await web.UnixSite(runner, str(sock)).start()
    try:
        async with aiohttp.ClientSession(
            connector=aiohttp.UnixConnector(path=str(sock))
        ) as session:
            async with session.get("http://x/bug") as r:
                statuses = [r.status]
        for _ in range(5):
            answer = await _until_closed(sock, BAD_VERSION)
            statuses.append(int(answer.split()[1]))
        return statuses
    finally:
        await runner.cleanup()


def test_our_own_fault_keeps_its_traceback(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    CLIENT_LOG.flush()  # no window left open by another test in this process
    statuses = asyncio.run(_serve_edge(tmp_path / "s.sock"))
    assert statuses == [500] + [400] * 5
    records = [r for r in caplog.records if r.name == edge.SERVER_LOGGER.name]
    faults = [r for r in records if r.exc_info]
    # The bug: aiohttp's ERROR with the exception and its traceback.
    assert [(r.levelname, type(r.exc_info[1])) for r in faults] == [
        ("ERROR", RuntimeError)
    ]
    assert "a bug of ours" in caplog.text and "Traceback" in caplog.text
    # The malformed requests: one INFO line, no traceback.
    client = [r.getMessage() for r in records if not r.exc_info]
    assert len(client) == 1 and "malformed request (BadStatusLine)" in client[0]
    CLIENT_LOG.flush()


def test_importing_the_edge_changes_no_logger() -> None:
    import subprocess
    import sys

    code = (
        "import logging, daemon.protocols.openai.edge as e;"
        "print(len(logging.getLogger(e.SERVER_LOGGER.name).filters));"
        "e.server_logger(); e.server_logger();"
        "print(len(e.SERVER_LOGGER.filters))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["0", "1"]  # none at import; one, however often it is asked
