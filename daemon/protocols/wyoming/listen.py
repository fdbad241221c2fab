"""Wyoming speech to text on one connection: ``transcribe`` (optional), then
``audio-start`` / ``audio-chunk``* / ``audio-stop`` → ``transcript``.

``transcribe`` may name a model or a program (``info``'s ``asr[].name``, one
per ASR engine).  ``audio-start`` opens a transcription session (its format
checked by the one check: 8..192 kHz, 1..8 channels, 16-bit); each
``audio-chunk`` is fed to the session as it arrives (s16le interleaved →
float32 ``[n, channels]``), so the engine works while the user still speaks.
A relay task streams what the session hears back: ``transcript-start`` at
once, a ``transcript-chunk`` per growth of the text (the finals so far plus
the open partial: chunks only append, and join up to the transcript), then
after ``audio-stop`` the ``transcript`` (the whole text, with its language)
and ``transcript-stop``.

A bad cycle gets one ``error`` event (its field named as on the wire) and the
session is cancelled; the cycle's later chunks are dropped until its
``audio-stop``, and the connection serves the next cycle as usual.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from wyoming.asr import Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.error import Error
from wyoming.event import Event

from daemon.engine.cancel import Cancelled
from daemon.engine.requests import BadRequest, BadValue, Found, RequestError, refuse
from daemon.protocols.wyoming.requests import (
    ASR_WIRE,
    AudioFormat,
    TranscribeData,
    audio_format,
    error_event,
    transcribe_data,
    transcription_request,
)
from daemon.service.host import EngineHost
from daemon.service.jobs import AsrJob, outcome

_LOGGER = logging.getLogger(__name__)
#: Full scale of a 16-bit sample: int16 / 32768 lies in [-1, 1).
INT16_SCALE: Final = 32768.0
PROTOCOL: Final = "wyoming"

Write = Callable[[Event], Awaitable[None]]


@dataclass(eq=False)
class _Cycle:
    """One audio-start ... audio-stop cycle."""

    format: AudioFormat | None
    job: AsrJob | None = None
    relay: asyncio.Task[None] | None = None
    #: refused (its error was sent): its chunks are dropped until audio-stop
    failed: bool = False
    stopped: bool = False  # audio-stop came; the relay sends the transcript


class Listener:
    """The speech-to-text side of one Wyoming connection."""

    def __init__(self, host: EngineHost, write: Write) -> None:
        self._host, self._write = host, write
        self._asked: TranscribeData | None = None  # the last transcribe
        self._cycle: _Cycle | None = None
        self._last: asyncio.Task[None] | None = None  # a relay still finishing

    @property
    def busy(self) -> bool:
        """A session is open or its transcript still being sent."""
        open_ = self._cycle is not None and not self._cycle.failed
        return open_ or (self._last is not None and not self._last.done())

    async def transcribe(self, data: dict[str, Any]) -> None:
        try:
            self._asked = transcribe_data(data)
        except BadRequest as exc:
            self._asked = None
            await self._refuse(exc)

    async def start(self, data: dict[str, Any]) -> None:
        if self._cycle is not None and not self._cycle.stopped:
            await self._fail(self._cycle, "audio-start while a transcription is open")
        if self._last is not None:  # one transcript after the other
            await asyncio.gather(self._last, return_exceptions=True)
        asked, self._asked = self._asked, None  # a transcribe is for one cycle
        try:
            f = audio_format(data)
            request = transcription_request(self._model(asked), f)
            job = self._host.open_session(request, PROTOCOL)
        except RequestError as exc:
            self._cycle = _Cycle(None, failed=True)
            await self._refuse(exc)
            return
        cycle = self._cycle = _Cycle(f, job)
        cycle.relay = self._last = asyncio.create_task(self._relay(cycle, asked))

    async def chunk(self, data: dict[str, Any], payload: bytes | None) -> None:
        cycle = self._cycle
        if cycle is None or cycle.stopped:
            self._cycle = _Cycle(None, failed=True)  # one error, not one per chunk
            await self._refuse(BadRequest("audio-chunk before audio-start"))
            return
        if cycle.failed or cycle.job is None or cycle.format is None:
            return
        try:
            pcm = _samples(cycle.format, audio_format(data), payload or b"")
            await cycle.job.feed(pcm)
        except BadRequest as exc:
            await self._fail(cycle, exc)
        except (Cancelled, RequestError):
            return  # the session ended; the relay says how
        except RuntimeError as exc:  # SessionFinished: after audio-stop
            _LOGGER.debug("wyoming: dropping audio: %s", exc)

    async def stop(self) -> None:
        cycle, self._cycle = self._cycle, None
        if cycle is None or cycle.failed or cycle.job is None:
            return  # a refused cycle ends here: its error was sent
        cycle.stopped = True
        try:
            cycle.job.finish()
        except (Cancelled, RequestError, RuntimeError):
            pass  # ended already: the relay says how

    def cancel(self, reason: str) -> None:
        """The client left: stop its session within one graph call."""
        cycle = self._cycle
        if cycle is not None and cycle.job is not None:
            self._host.cancel(cycle.job, reason)

    async def close(self) -> None:
        """Wait for the last relay (its session ended or was cancelled)."""
        if self._last is not None:
            await asyncio.gather(self._last, return_exceptions=True)

    async def _relay(self, cycle: _Cycle, asked: TranscribeData | None) -> None:
        job = cycle.job
        assert job is not None
        try:
            await self._send(cycle, job, asked.language if asked else None)
        except ConnectionError:  # the client left: its session stops
            self._host.cancel(job, "client disconnected")
        finally:
            cycle.failed = True

    async def _send(self, cycle: _Cycle, job: AsrJob, language: str | None) -> None:
        done = shown = ""  # the finals' text; what the client was sent
        try:
            await self._write(TranscriptStart(language=language).event())
            async for t in job:
                if cycle.failed:  # refused meanwhile: its error was the last word
                    return
                language = t.language or language
                text = done + t.text
                done = text if t.final else done
                if len(text) > len(shown) and text.startswith(shown):
                    await self._write(TranscriptChunk(text[len(shown) :]).event())
                    shown = text
        except RequestError as exc:
            if not cycle.failed:
                await self._write(error_event(exc, ASR_WIRE))
            return
        except Cancelled as exc:
            if not cycle.failed:
                await self._write(Error(text=str(exc), code=outcome(exc)).event())
            return
        if len(done) > len(shown) and done.startswith(shown):
            await self._write(TranscriptChunk(done[len(shown) :]).event())
        await self._write(Transcript(text=done, language=language).event())
        await self._write(TranscriptStop().event())

    def _model(self, asked: TranscribeData | None) -> TranscribeData | None:
        """``asked`` with a program's name (``describe`` lists one per ASR
        engine) read as that engine's first model: clients may name either."""
        if asked is None or not asked.name or asked.name in self._host.voices:
            return asked
        for v in self._host.voices.values():
            if v.task == "asr" and v.engine_id == asked.name:
                return TranscribeData(v.name, asked.language)
        return asked

    async def _fail(self, cycle: _Cycle, problem: BadRequest | str) -> None:
        """Refuse the rest of ``cycle``: one error, its session cancelled."""
        exc = BadRequest(problem) if isinstance(problem, str) else problem
        cycle.failed = True
        if cycle.job is not None:
            self._host.cancel(cycle.job, str(exc))
        await self._refuse(exc)

    async def _refuse(self, exc: RequestError) -> None:
        if isinstance(exc, BadRequest):
            self._host.metrics.request(PROTOCOL, "bad_request")
        await self._write(error_event(exc, ASR_WIRE))


def _samples(opened: AudioFormat, got: AudioFormat, payload: bytes) -> np.ndarray:
    """An ``audio-chunk``'s s16le payload as float32 ``[n, channels]`` (``[n]``
    for mono); its format must be audio-start's."""
    for name in ("rate", "width", "channels"):
        want, found = getattr(opened, name), getattr(got, name)
        if want != found:
            raise refuse(BadValue, name, f"{want} (as in audio-start)", found)
    frame = got.width * got.channels
    if len(payload) % frame:
        found = Found(f"{len(payload)} bytes")
        expected = f"whole frames of {frame} bytes ({got.channels} x 16-bit)"
        raise refuse(BadValue, "payload", expected, found)
    pcm = np.frombuffer(payload, "<i2").astype(np.float32) / INT16_SCALE
    return pcm if got.channels == 1 else pcm.reshape(-1, got.channels)
