"""Talking Wyoming (library ``wyoming``) to the running service, as
``hexvoice say`` and ``hexvoice voices`` do: ``describe`` (what it offers) and
``synthesize`` (one text's audio).

``socket``: a Unix socket path, or a ``unix://`` / ``tcp://`` URI.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import wave
from dataclasses import dataclass
from typing import Final

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize

from daemon.cli.errors import CommandError
from daemon.service.config import DEFAULT_RUNTIME_DIR

DEFAULT_SOCKET: Final = str(DEFAULT_RUNTIME_DIR / "wyoming.sock")
CONNECT_TIMEOUT_S: Final = 5.0
#: Per event; a queued request may wait this long for its first audio.
READ_TIMEOUT_S: Final = 300.0


@dataclass
class Speech:
    pcm: bytes
    rate: int
    width: int
    channels: int
    first_audio_s: float

    @property
    def seconds(self) -> float:
        return len(self.pcm) / (self.rate * self.width * self.channels)

    def write_wav(self, out: str) -> None:
        f = sys.stdout.buffer if out == "-" else open(out, "wb")
        try:
            with wave.open(f, "wb") as w:
                w.setnchannels(self.channels)
                w.setsampwidth(self.width)
                w.setframerate(self.rate)
                w.writeframes(self.pcm)
        finally:
            if f is not sys.stdout.buffer:
                f.close()


def uri(socket: str) -> str:
    # Absolute: in "unix://run/wyoming.sock" a URI parser takes "run" for a host.
    return socket if "://" in socket else f"unix://{os.path.abspath(socket)}"


async def _connect(socket: str) -> AsyncClient:
    client = AsyncClient.from_uri(uri(socket))
    client.connect_timeout, client.read_timeout = CONNECT_TIMEOUT_S, READ_TIMEOUT_S
    try:
        await client.connect()
    except (OSError, asyncio.TimeoutError) as exc:
        raise CommandError(
            f"cannot reach hexvoice at {socket}: {exc} (is `hexvoice serve` running?)"
        ) from None
    return client


async def describe(socket: str) -> Info:
    client = await _connect(socket)
    try:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if event is None:
                raise CommandError("the service closed the connection")
            if Info.is_type(event.type):
                return Info.from_event(event)
    finally:
        await client.disconnect()


async def synthesize(
    socket: str,
    text: str,
    voice: str | None = None,
    speaker: str | None = None,
    language: str | None = None,
) -> Speech:
    client = await _connect(socket)
    t0 = time.monotonic()
    try:
        await client.write_event(_synthesize(text, voice, speaker, language))
        pcm, fmt, first = bytearray(), None, 0.0
        while True:
            event = await client.read_event()
            if event is None:
                raise CommandError("the service closed the connection mid-request")
            if Error.is_type(event.type):
                err = Error.from_event(event)
                raise CommandError(f"service error ({err.code}): {err.text}")
            if AudioStart.is_type(event.type):
                fmt = AudioStart.from_event(event)
            elif AudioChunk.is_type(event.type):
                if not pcm:
                    first = time.monotonic() - t0
                pcm += AudioChunk.from_event(event).audio
            elif AudioStop.is_type(event.type):
                break
        if fmt is None:
            raise CommandError("the service sent audio-stop without audio-start")
        return Speech(bytes(pcm), fmt.rate, fmt.width, fmt.channels, first)
    finally:
        await client.disconnect()


def _synthesize(
    text: str, voice: str | None, speaker: str | None, language: str | None
) -> Event:
    """The ``synthesize`` event.  ``SynthesizeVoice`` drops the language when a
    name is set (wyoming's serializer, as Home Assistant sends it); the service
    reads both, so a voice that speaks several languages hears which one."""
    event = Synthesize(text=text).event()
    fields = {"name": voice, "speaker": speaker, "language": language}
    wanted = {k: v for k, v in fields.items() if v is not None}
    return Event(
        event.type, {**(event.data or {}), "voice": wanted} if wanted else event.data
    )
