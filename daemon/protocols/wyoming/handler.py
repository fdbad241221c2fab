"""One Wyoming client connection (events and framing by the library ``wyoming``).

A reader loop stays responsive (``describe``/``ping`` are answered while audio
streams; end of input cancels the request of a client that left) and a sender
task plays the queued work in order.  One ``synthesize`` gives exactly one
``audio-start``/``audio-chunk``*/``audio-stop`` cycle; a
``synthesize-start``/``-chunk``/``-stop`` stream gives one cycle per complete
sentence (``daemon.text.sentences``), each after the first led by the pause the engine
puts between sentences (``daemon.engine.audio``), and always ends in
``synthesize-stopped``.  Audio is framed in ``SAMPLES_PER_CHUNK`` chunks; only the
last chunk of a cycle is shorter.  Unknown events are ignored.
Failures are ``error`` events; framing errors (malformed header, oversized data
or payload) also close the connection: the byte stream cannot be resynchronised.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event, async_read_event
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
)

from daemon.engine.audio import COMMA_PAUSE_S, SENTENCE_PAUSE_S, Frames, to_int16
from daemon.engine.cancel import Cancelled
from daemon.engine.tts import SynthesisOptions
from daemon.protocols.wyoming.input import (
    FramingError,
    GuardedReader,
    Idle,
    Timeouts,
    peer_closed,
)
from daemon.service.host import EngineHost
from daemon.service.jobs import BadText, Job, ServiceError, Voice, check_text, outcome
from daemon.text.sentences import Sentence, SentenceStream

_LOGGER = logging.getLogger(__name__)
SAMPLE_WIDTH: Final = 2  # s16le
CHANNELS: Final = 1
#: Audio per ``audio-chunk`` event (wyoming-piper also sends 1024 samples).
SAMPLES_PER_CHUNK: Final = 1024
_MS: Final = 1000
_CLOSE: Final = object()


@dataclass
class _Stream:
    voice: Voice | None  # None once failed
    speaker: str | None
    sentences: SentenceStream
    failed: bool = False
    #: before the next sentence: the pause after the one queued last
    pause_s: float = 0.0


@dataclass
class _Synth:
    text: str
    voice: Voice
    speaker: str | None
    received: float
    stream: _Stream | None = None
    pause_s: float = 0.0  # silence before the audio


@dataclass
class _Say:
    event: Event
    stream: _Stream | None = field(default=None)


class WyomingHandler(AsyncEventHandler):
    """One client connection: a reader loop and a sender task."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        host: EngineHost,
        info: Callable[[], Info],
    ) -> None:
        limits = host.cfg.limits
        self._guard = GuardedReader(
            reader,
            limits.max_event_bytes,
            Timeouts(
                limits.idle_timeout_s, limits.header_timeout_s, limits.body_timeout_s
            ),
            self.busy,
        )
        super().__init__(reader, writer)
        self.host, self._info = host, info
        self._work: asyncio.Queue[Any] = asyncio.Queue()
        self._stream: _Stream | None = None
        self._job: Job | None = None
        self._gone = False

    async def run(self) -> None:
        sender = asyncio.create_task(self._send_loop())
        try:
            await self._read_loop()
        finally:
            if self._gone and self._job is not None:
                self.host.cancel(self._job, "client disconnected")
            self._work.put_nowait(_CLOSE)
            await asyncio.gather(sender, return_exceptions=True)
            self.writer.close()

    def busy(self) -> bool:
        """Audio queued or being made for this client: waiting for it is not idle.

        An open text stream is not busy: a client that starts one and sends
        nothing for ``idle_timeout_s`` is let go like any other.
        """
        return self._job is not None or not self._work.empty()

    def idle(self) -> bool:
        """Waiting between events with nothing in flight and no text stream open
        (one may pause between tokens): the cap may reclaim it for a newcomer."""
        return self._guard.waiting and not self.busy() and self._stream is None

    def hang_up(self) -> None:
        """Service stopping: end the read loop; the sender stops after its item."""
        self._gone = True
        self.reader.feed_eof()

    async def _read_loop(self) -> None:
        while not self._gone:
            try:
                event = await async_read_event(self._guard)  # type: ignore[arg-type]
            except Idle as exc:
                _LOGGER.debug("wyoming client %s; closing", exc)
                return
            except FramingError as exc:
                return await self._fatal(str(exc))
            except (KeyError, TypeError, AttributeError):
                return await self._fatal(
                    "malformed event header: needs a string 'type' and integer "
                    "'data_length'/'payload_length'"
                )
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                _LOGGER.debug("wyoming client gone: %r", exc)
                self._gone = True
                return
            if event is None:
                if self._guard.line.strip():
                    return await self._fatal("malformed event: not a JSON object")
                # End of input.  A client that closed (not just shut down its
                # writing side) is gone: stop its work within one graph call.
                self._gone = self._gone or peer_closed(self.writer)
                _LOGGER.debug("wyoming client: end of input (gone: %s)", self._gone)
                return
            if not isinstance(event.data, dict):
                return await self._fatal("malformed event: 'data' is not an object")
            try:
                await self.handle_event(event)
            except ConnectionError:  # an answer (info, pong) found the peer gone
                self._gone = True
                return

    async def _fatal(self, message: str) -> None:
        _LOGGER.info("wyoming client: %s; closing", message)
        self._gone = True
        if self._job is not None:
            self.host.cancel(self._job, "protocol error")
        try:
            await self.write_event(Error(text=message, code="bad_event").event())
        except ConnectionError:
            pass

    async def write_event(self, event: Event) -> None:
        # asyncio's drain() does not raise once the transport is closed; say so,
        # or the sender would keep "sending" a cancelled client its audio.
        if self.writer.transport.is_closing():
            raise ConnectionResetError("client connection closed")
        await super().write_event(event)

    async def handle_event(self, event: Event) -> bool:
        now = time.monotonic()
        if Describe.is_type(event.type):
            await self.write_event(self._info().event())
        elif Ping.is_type(event.type):
            await self.write_event(Pong(text=Ping.from_event(event).text).event())
        elif Synthesize.is_type(event.type):
            if self._stream is None:  # during a stream it duplicates the chunks
                self._queue_synthesize(event, now)
        elif SynthesizeStart.is_type(event.type):
            self._start_stream(event)
        elif SynthesizeChunk.is_type(event.type) and self._stream is not None:
            text = event.data.get("text")
            if isinstance(text, str):
                try:
                    check_text(text)
                except BadText as exc:  # one error; the stream ends as it would
                    if not self._stream.failed:
                        self._queue_error(_BadInput(str(exc), exc.code))
                    self._stream.failed = True
                self._queue_sentences(self._stream.sentences.add(text), now)
        elif SynthesizeStop.is_type(event.type) and self._stream is not None:
            self._queue_sentences(self._stream.sentences.finish(), now)
            self._work.put_nowait(_Say(SynthesizeStopped().event(), self._stream))
            self._stream = None
        else:
            _LOGGER.debug("ignoring wyoming event %r", event.type)
        return True

    def _voice(self, data: dict[str, Any]) -> tuple[Voice, str | None]:
        v = data.get("voice") or {}
        if not isinstance(v, dict):
            raise _BadInput("'voice' must be an object {name, language, speaker}")
        name, lang, speaker = v.get("name"), v.get("language"), v.get("speaker")
        for key, val in (("name", name), ("language", lang), ("speaker", speaker)):
            if val is not None and not isinstance(val, str):
                raise _BadInput(f"voice.{key} must be a string")
        try:
            voice = self.host.resolve(name, None if name else lang)
        except ServiceError as exc:
            raise _BadInput(str(exc), exc.code) from None
        if speaker and speaker not in voice.speakers:
            known = list(voice.speakers) or "none (single-speaker voice)"
            raise _BadInput(
                f"voice {voice.name!r} has no speaker {speaker!r}; speakers: {known}",
                "unknown_speaker",
            )
        return voice, speaker or None

    def _queue_synthesize(self, event: Event, now: float) -> None:
        try:
            text = event.data.get("text")
            if not isinstance(text, str):
                raise _BadInput("synthesize needs 'text' (a string)")
            voice, speaker = self._voice(event.data)
            self._check_text(text)
        except _BadInput as exc:
            self._queue_error(exc)
            return
        self._work.put_nowait(_Synth(text, voice, speaker, now))

    def _start_stream(self, event: Event) -> None:
        sentences = SentenceStream(self.host.cfg.limits.max_input_chars)
        try:
            voice, speaker = self._voice(event.data)
        except _BadInput as exc:
            # The stream still runs to its synthesize-stopped, speaking nothing:
            # it needs no voice (there may be none loaded at all).
            self._queue_error(exc)
            self._stream = _Stream(None, None, sentences, failed=True)
            return
        self._stream = _Stream(voice, speaker, sentences)

    def _queue_sentences(self, sentences: list[Sentence], now: float) -> None:
        s = self._stream
        assert s is not None
        if s.failed or s.voice is None:
            return
        for sentence in sentences:
            item = _Synth(sentence.text, s.voice, s.speaker, now, s, s.pause_s)
            self._work.put_nowait(item)
            # What an engine puts after such a piece within one request.
            s.pause_s = SENTENCE_PAUSE_S if sentence.complete else COMMA_PAUSE_S

    def _check_text(self, text: str) -> None:
        try:
            check_text(text)
        except BadText as exc:
            raise _BadInput(str(exc), exc.code) from None
        if not text.strip():
            raise _BadInput("text is empty", "empty_text")
        limit = self.host.cfg.limits.max_input_chars
        if len(text) > limit:
            raise _BadInput(
                f"text is {len(text)} characters; the limit is {limit}", "text_too_long"
            )

    def _queue_error(self, exc: _BadInput) -> None:
        self.host.metrics.request("wyoming", "bad_request")
        self._work.put_nowait(_Say(Error(text=str(exc), code=exc.code).event()))

    # -- sender ----------------------------------------------------------------

    async def _send_loop(self) -> None:
        while True:
            item = await self._work.get()
            if item is _CLOSE or self._gone:
                return
            try:
                if isinstance(item, _Say):
                    await self.write_event(item.event)
                elif item.stream is None or not item.stream.failed:
                    ok = await self._synthesize(item)
                    if not ok and item.stream is not None:
                        item.stream.failed = True
            except ConnectionError:
                self._gone = True
                if self._job is not None:
                    self.host.cancel(self._job, "client disconnected")
                return

    async def _synthesize(self, item: _Synth) -> bool:
        options = SynthesisOptions(voice=item.voice.name, speaker=item.speaker)
        try:
            job = self.host.submit(item.text, item.voice, options, "wyoming")
        except ServiceError as exc:
            await self.write_event(Error(text=str(exc), code=exc.code).event())
            return False
        self._job = job
        rate = item.voice.sample_rate
        frames = Frames(SAMPLES_PER_CHUNK * SAMPLE_WIDTH)
        started, sent = False, 0  # samples
        try:
            async for chunk in job:
                pcm = to_int16(chunk.audio)
                if not started and len(pcm):
                    started = True
                    self.host.metrics.first_audio(
                        "wyoming", time.monotonic() - item.received
                    )
                    await self.write_event(
                        AudioStart(rate, SAMPLE_WIDTH, CHANNELS).event()
                    )
                    pcm = bytes(round(item.pause_s * rate) * SAMPLE_WIDTH) + pcm
                for frame in frames.push(pcm):
                    sent = await self._audio(frame, rate, sent)
        except (ServiceError, Cancelled) as exc:
            code = exc.code if isinstance(exc, ServiceError) else outcome(exc)
            await self.write_event(Error(text=str(exc), code=code).event())
            return False
        except BaseException:  # a write found the client gone, or we are cancelled
            self.host.cancel(job, "client disconnected")
            raise
        finally:
            self._job = None
        if not started:  # the engine had nothing to say: still one (empty) cycle
            await self.write_event(AudioStart(rate, SAMPLE_WIDTH, CHANNELS).event())
        last = frames.flush()
        if last:
            sent = await self._audio(last, rate, sent)
        await self.write_event(AudioStop(timestamp=sent * _MS // rate).event())
        return True

    async def _audio(self, pcm: bytes, rate: int, sent: int) -> int:
        """One ``audio-chunk`` stamped with its start (ms); samples sent after it."""
        await self.write_event(
            AudioChunk(rate, SAMPLE_WIDTH, CHANNELS, pcm, sent * _MS // rate).event()
        )
        return sent + len(pcm) // SAMPLE_WIDTH


class _BadInput(Exception):
    def __init__(self, message: str, code: str = "bad_request") -> None:
        super().__init__(message)
        self.code = code
