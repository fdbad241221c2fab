"""Wyoming server: listening sockets, the ``info`` it describes itself with
(a ``tts`` program with every voice, an ``asr`` program per loaded ASR bundle).

Each connection is a ``WyomingHandler`` (handler.py).  Sockets come from
``daemon.service.edge.listeners`` (systemd's or our own); this module never
unlinks a path.
"""

from __future__ import annotations

import asyncio
import io
import socket
from functools import cache
from importlib import metadata
from typing import Any, Final

from wyoming.error import Error
from wyoming.event import write_event
from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    Info,
    TtsProgram,
    TtsVoice,
    TtsVoiceSpeaker,
)

from daemon.protocols.wyoming.handler import WyomingHandler
from daemon.protocols.wyoming.input import MAX_HEADER_BYTES
from daemon.service.edge.admission import Acceptor, Admission, Tracked
from daemon.service.host import EngineHost
from daemon.service.voices.voice import Voice

PROGRAM_NAME: Final = "hexvoice"
#: The Project-URL labels (PEP 753 normalizes "Homepage"/"Home-page" to
#: "homepage") that name where hexvoice lives.
_HOME_LABELS: Final = frozenset({"homepage", "home-page", "home"})
#: pyproject.toml's [project.urls] Homepage, for a checkout run without an
#: install (no package metadata to read it from).
FALLBACK_URL: Final = "https://github.com/hexvoice/hexvoice"


def project_url() -> str:
    """Where hexvoice lives, as its package metadata says (pyproject.toml's
    [project.urls] Homepage, else the legacy Home-page field); FALLBACK_URL
    when hexvoice is not installed or its metadata names no home."""
    try:
        meta = metadata.metadata(PROGRAM_NAME)
    except metadata.PackageNotFoundError:
        return FALLBACK_URL
    for entry in meta.get_all("Project-URL") or ():
        label, _, url = entry.partition(",")
        if label.strip().lower() in _HOME_LABELS and url.strip():
            return url.strip()
    return meta.get("Home-page") or FALLBACK_URL


def package_version() -> str | None:
    """hexvoice's installed version (None when run from a bare checkout)."""
    try:
        return metadata.version(PROGRAM_NAME)
    except metadata.PackageNotFoundError:
        return None


@cache
def attribution() -> Attribution:
    """The program's credit (clients such as Home Assistant show it), and each
    voice's when its engine names none of its own; read from the package
    metadata on first use, not at import."""
    return Attribution(name=PROGRAM_NAME, url=project_url())


#: How long a stopping service waits for connections to flush their last events.
CLOSE_TIMEOUT_S: Final = 5.0


def _event_bytes(event: Error) -> bytes:
    buf = io.BytesIO()
    write_event(event.event(), buf)
    return buf.getvalue()


#: Sent to a connection past ``limits.max_connections`` when none is idle.
REFUSAL: Final = _event_bytes(
    Error(text="too many connections; retry shortly", code="too_many_connections")
)


class WyomingServer:
    """Serves Wyoming on any number of listening sockets, through ``admission``."""

    def __init__(self, host: EngineHost, admission: Admission) -> None:
        self.host, self._admission = host, admission
        self._acceptors: list[Acceptor] = []
        self._connections: dict[WyomingHandler, asyncio.Task[None]] = {}

    async def start(self, sockets: list[socket.socket]) -> None:
        for sock in sockets:
            self._acceptors.append(self._admission.serve(sock, self._accept, REFUSAL))

    async def _accept(self, sock: socket.socket) -> Tracked:
        reader, writer = await asyncio.open_connection(
            sock=sock, limit=MAX_HEADER_BYTES
        )
        conn = WyomingHandler(reader, writer, self.host, self.info)
        self._connections[conn] = asyncio.create_task(self._serve(conn))
        # Reclaimed for a newcomer like a stopping service ends it: the reader
        # stops, whatever is being sent is finished.
        return Tracked(writer.transport, conn.idle, conn.hang_up)

    async def _serve(self, conn: WyomingHandler) -> None:
        try:
            await conn.run()
        finally:
            self._connections.pop(conn, None)

    def info(self) -> Info:
        voices = [
            TtsVoice(
                **_described(v),
                speakers=[TtsVoiceSpeaker(s) for s in v.speakers] or None,
            )
            for v in self.host.voices.values()
            if v.task == "tts"  # ASR models are not speech voices
        ]
        program = TtsProgram(
            name=PROGRAM_NAME,
            attribution=attribution(),
            installed=True,
            description="On-device text to speech on the Qualcomm NPU",
            version=package_version(),
            voices=voices,
            supports_synthesize_streaming=True,
        )
        return Info(tts=[program], asr=self._asr_programs())

    def _asr_programs(self) -> list[AsrProgram]:
        """One program per loaded ASR engine (bundle), with its models."""
        engines: dict[object, list[Voice]] = {}
        for v in self.host.voices.values():
            if v.task == "asr":
                engines.setdefault(v.engine_key, []).append(v)
        return [
            AsrProgram(
                name=models[0].engine_id,
                attribution=attribution(),
                installed=True,
                description=f"On-device speech to text on the Qualcomm NPU "
                f"({models[0].engine_id})",
                version=package_version(),
                models=[AsrModel(**_described(m)) for m in models],
                supports_transcript_streaming=True,
            )
            for models in engines.values()
        ]

    async def stop_accepting(self) -> None:
        for acceptor in self._acceptors:
            await acceptor.stop()

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


def _described(v: Voice) -> dict[str, Any]:
    """What ``info`` says of a voice or a model, either task."""
    return {
        "name": v.name,
        "attribution": _credit(v),
        "installed": True,
        "description": v.description or f"{v.name} ({v.engine_id})",
        "version": None,
        "languages": list(v.languages),
    }


def _credit(v: Voice) -> Attribution:
    """A voice's or model's own credit, else the program's."""
    return Attribution(*v.attribution) if v.attribution[0] else attribution()
