"""Wyoming speech to text on one connection: ``transcribe`` (optional), then
``audio-start`` / ``audio-chunk``* / ``audio-stop`` → ``transcript``.

``transcribe`` may name a model or a program (``info``'s ``asr[].name``, one
per ASR engine); its model and language are checked when it arrives, so a
refusal (no such model, none loaded at all) is heard before any audio.
``audio-start`` opens a transcription session (its format checked by the one
check: 8..192 kHz, 1..8 channels, 16-bit) and is answered by
``transcript-start`` at once; each ``audio-chunk`` is fed to the session as it
arrives (s16le interleaved → float32 ``[n, channels]``), so the engine works
while the user still speaks.  A relay task (transcripts.py) streams what the
session hears: ``transcript-chunk`` events as the text grows, then after
``audio-stop`` the ``transcript`` and ``transcript-stop``.  A ``transcribe``
whose ``audio-stop`` came with no ``audio-start`` gets the same three events
with an empty text (as wyoming-faster-whisper answers a stop without audio);
an ``audio-stop`` that nothing asked for is ignored.

Every request gets one answer, in the order asked: the transcript, or one
``error`` (its field named as on the wire), after which its cycle sends
nothing: the session is cancelled and the cycle's later chunks are dropped
until its ``audio-stop``; the connection serves the next cycle as usual.  An
answer for a new cycle waits for the last transcript to be sent.  Input that
ends (or idles) before an asked-for ``audio-stop`` is refused as well.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Final

from wyoming.asr import Transcript, TranscriptStart, TranscriptStop

from daemon.protocols.wyoming.requests import (
    ASR_WIRE,
    SAMPLE_WIDTH,
    AudioFormat,
    TranscribeData,
    audio_format,
    chunk_samples,
    error_event,
    transcribe_data,
    transcription_request,
)
from daemon.protocols.wyoming.transcripts import Cycle, Write, relay
from daemon.sdk.cancel import Cancelled
from daemon.service.edge.refusals import BadRequest, RequestError, UnknownVoice
from daemon.service.edge.requests import MIN_ASR_RATE
from daemon.service.host import EngineHost
from daemon.service.voices.voice import capabilities
from daemon.text.languages import transcript_language

_LOGGER = logging.getLogger(__name__)
PROTOCOL: Final = "wyoming"
#: The refusal of a service whose voices all speak (``info`` lists no asr).
NO_MODEL: Final = "no speech-recognition model is loaded: this service only speaks"
INPUT_ENDED: Final = "input ended"


@dataclass(eq=False)
class _Ask:
    """One ``transcribe``, for the next cycle."""

    data: dict[str, Any]
    checked: TranscribeData | None = None  # None: not checked (came mid-cycle)
    refused: bool = False  # its error was its answer: its cycle stays silent


class Listener:
    """The speech-to-text side of one Wyoming connection."""

    def __init__(self, host: EngineHost, write: Write) -> None:
        self._host, self._write = host, write
        self._asked: _Ask | None = None  # the last transcribe, not yet answered
        self._cycle: Cycle | None = None  # between audio-start and audio-stop
        self._last: Cycle | None = None  # the last one with a relay

    @property
    def busy(self) -> bool:
        """A session is open or its transcript still being sent."""
        open_ = self._cycle is not None and not self._cycle.answered
        return open_ or self._relaying()

    async def transcribe(self, data: dict[str, Any]) -> None:
        self._asked = _Ask(data)
        if self._cycle is None:  # mid-cycle: checked when the next one begins
            await self._check(self._asked)

    async def start(self, data: dict[str, Any]) -> None:
        if self._cycle is not None:
            await self._fail(self._cycle, "audio-start while a transcription is open")
        ask = await self._take()
        self._cycle = Cycle(None, answered=True)  # refused unless it opens below
        if ask is not None and ask.refused:
            return
        asked = ask.checked if ask is not None else None
        try:
            self._require_model()
            f = audio_format(data)
            request = transcription_request(asked, f)
            job = self._host.open_session(request, PROTOCOL)
        except RequestError as exc:
            await self._refuse(exc)
            return
        cycle = self._cycle = Cycle(f, job)
        language = asked.language if asked is not None else None
        start = TranscriptStart(language=transcript_language(language))
        await self._write(start.event())  # first
        cycle.relay = asyncio.create_task(
            relay(cycle, language, self._write, self._host.cancel)
        )
        self._last = cycle

    async def chunk(self, data: dict[str, Any], payload: bytes | None) -> None:
        cycle = self._cycle
        if cycle is None:
            ask = await self._take()
            self._cycle = Cycle(None, answered=True)  # one error, not one per chunk
            if ask is None or not ask.refused:
                await self._refuse(BadRequest("audio-chunk before audio-start"))
            return
        if cycle.answered or cycle.job is None or cycle.format is None:
            return
        try:
            pcm = chunk_samples(cycle.format, audio_format(data), payload or b"")
            await cycle.job.feed(pcm)
        except BadRequest as exc:
            await self._fail(cycle, exc)
        except (Cancelled, RequestError):
            return  # the session ended; the relay says how
        except RuntimeError as exc:  # SessionFinished: the session ended by itself
            _LOGGER.debug("wyoming: dropping audio: %s", exc)

    async def stop(self) -> None:
        cycle, self._cycle = self._cycle, None
        if cycle is not None:
            if not cycle.answered and cycle.job is not None:
                try:
                    cycle.job.finish()
                except (Cancelled, RequestError, RuntimeError):
                    pass  # ended already: the relay says how
            if self._asked is not None:  # came mid-cycle: answerable now
                await self._check(self._asked)
            return
        ask = await self._take()
        if ask is None:
            _LOGGER.debug("wyoming: audio-stop with nothing to answer")
        elif not ask.refused:  # asked, and no audio came
            hint = ask.checked.language if ask.checked is not None else None
            language = transcript_language(hint)
            await self._write(TranscriptStart(language=language).event())
            await self._write(Transcript(text="", language=language).event())
            await self._write(TranscriptStop().event())

    def cancel(self, reason: str) -> None:
        """The client left: stop its sessions within one graph call."""
        for cycle in (self._cycle, self._last):
            if cycle is not None:
                cycle.answered = True
                if cycle.job is not None:
                    self._host.cancel(cycle.job, reason)

    async def close(self, ended: str | None = INPUT_ENDED) -> None:
        """The input ended (``ended`` says how; None: the client left): one
        error for what is still unanswered; then wait for the last relay."""
        cycle, ask = self._cycle, self._asked
        open_ = cycle is not None and not cycle.answered
        if ended is not None and (open_ or (ask is not None and not ask.refused)):
            problem = f"{ended} before audio-stop"
            try:
                if cycle is not None and open_:
                    await self._fail(cycle, problem)
                else:
                    await self._quiet()
                    await self._refuse(BadRequest(problem))
            except ConnectionError:
                pass
        await self._quiet()

    def _relaying(self) -> bool:
        relay = self._last.relay if self._last is not None else None
        return relay is not None and not relay.done()

    async def _quiet(self) -> None:
        """Wait until the last transcript was sent: answers go in order."""
        relay = self._last.relay if self._last is not None else None
        if relay is not None:
            await asyncio.gather(relay, return_exceptions=True)

    async def _take(self) -> _Ask | None:
        """The transcribe for the cycle beginning now, checked (after the last
        transcript was sent, so a refusal follows it)."""
        await self._quiet()
        ask, self._asked = self._asked, None
        if ask is not None:
            await self._check(ask)
        return ask

    async def _check(self, ask: _Ask) -> None:
        """Check ``ask``'s model and language now (once): a refusal is sent."""
        if ask.checked is not None or ask.refused:
            return
        try:
            asked = self._model(transcribe_data(ask.data))
            self._require_model()
            # The audio's own format is checked at audio-start; until then, a
            # rate the model takes, so only the name and the language count.
            voice = self._host.resolve(asked.name, asked.language, "asr")
            rate = (capabilities(voice).sample_rates_in or (MIN_ASR_RATE,))[0]
            probe = AudioFormat(rate, SAMPLE_WIDTH, 1)
            self._host.check_session(transcription_request(asked, probe))
            ask.checked = asked
        except RequestError as exc:
            ask.refused = True
            await self._quiet()
            await self._refuse(exc)

    def _require_model(self) -> None:
        voices = self._host.voices.values()
        if voices and all(v.task != "asr" for v in voices):
            raise UnknownVoice(NO_MODEL)

    def _model(self, asked: TranscribeData) -> TranscribeData:
        """``asked`` with a program's name (``describe`` lists one per ASR
        engine) read as that engine's first model: clients may name either."""
        if not asked.name or asked.name in self._host.voices:
            return asked
        for v in self._host.voices.values():
            if v.task == "asr" and v.engine_id == asked.name:
                return TranscribeData(v.name, asked.language)
        return asked

    async def _fail(self, cycle: Cycle, problem: BadRequest | str) -> None:
        """Refuse the rest of ``cycle``: one error, its session cancelled."""
        if cycle.answered:
            return
        exc = BadRequest(problem) if isinstance(problem, str) else problem
        cycle.answered = True
        if cycle.job is not None:
            self._host.cancel(cycle.job, str(exc))
        await self._refuse(exc)

    async def _refuse(self, exc: RequestError) -> None:
        if isinstance(exc, BadRequest):
            self._host.metrics.request(PROTOCOL, "bad_request")
        await self._write(error_event(exc, ASR_WIRE))
