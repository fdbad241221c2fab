"""Wyoming TTS server: listening sockets, the ``info`` it describes itself with.

Each connection is a ``WyomingHandler`` (wyoming_handler.py).  Sockets come from
``daemon.listeners`` (systemd's or our own); this module never unlinks a path.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any, Final

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice, TtsVoiceSpeaker

from .host import EngineHost, package_version
from .wyoming_handler import WyomingHandler
from .wyoming_input import MAX_HEADER_BYTES

PROGRAM_NAME: Final = "hexvoice"
#: Where hexvoice lives, shown by clients that credit a program (Home Assistant's
#: Wyoming info).  A placeholder until the repository is published (pyproject.toml
#: has no [project.urls] yet): this is the one place to change.
PROJECT_URL: Final = "https://github.com/hexvoice/hexvoice"
#: The program's credit, and each voice's when its engine names none of its own.
ATTRIBUTION: Final = Attribution(name="hexvoice", url=PROJECT_URL)
#: How long a stopping service waits for connections to flush their last events.
CLOSE_TIMEOUT_S: Final = 5.0


class WyomingServer:
    """Serves Wyoming on any number of listening sockets."""

    def __init__(self, host: EngineHost) -> None:
        self.host = host
        self._servers: list[asyncio.AbstractServer] = []
        self._connections: dict[WyomingHandler, asyncio.Task[None]] = {}

    async def start(self, sockets: list[socket.socket]) -> None:
        for sock in sockets:
            kw: dict[str, Any] = {"sock": sock, "limit": MAX_HEADER_BYTES}
            if sock.family == socket.AF_UNIX:
                if sys.version_info >= (3, 13):
                    kw["cleanup_socket"] = False  # serve.py owns the path
                server = await asyncio.start_unix_server(self._accept, **kw)
            else:
                server = await asyncio.start_server(self._accept, **kw)
            self._servers.append(server)

    async def _accept(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        conn = WyomingHandler(reader, writer, self.host, self.info)
        self._connections[conn] = asyncio.current_task()  # type: ignore[assignment]
        try:
            await conn.run()
        finally:
            self._connections.pop(conn, None)

    def info(self) -> Info:
        attribution = ATTRIBUTION
        voices = [
            TtsVoice(
                name=v.name,
                attribution=(
                    Attribution(*v.attribution) if v.attribution[0] else attribution
                ),
                installed=True,
                description=v.description or f"{v.name} ({v.engine_id})",
                version=None,
                languages=list(v.languages),
                speakers=[TtsVoiceSpeaker(s) for s in v.speakers] or None,
            )
            for v in self.host.voices.values()
        ]
        program = TtsProgram(
            name=PROGRAM_NAME,
            attribution=attribution,
            installed=True,
            description="On-device text to speech on the Qualcomm NPU",
            version=package_version(),
            voices=voices,
            supports_synthesize_streaming=True,
        )
        return Info(tts=[program])

    async def stop_accepting(self) -> None:
        for server in self._servers:
            server.close()

    async def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Stop accepting, end every connection (their last events are flushed)."""
        await self.stop_accepting()
        for conn in list(self._connections):
            conn.hang_up()
        tasks = list(self._connections.values())
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=timeout)
            for task in late:
                task.cancel()
        for server in self._servers:
            await server.wait_closed()
