"""One Wyoming client connection (events and framing by the library ``wyoming``).

A reader loop stays responsive (``describe``/``ping`` are answered while audio
streams; end of input cancels the request of a client that left) and a sender
task plays the queued work in order.  One ``synthesize`` gives exactly one
``audio-start``/``audio-chunk``*/``audio-stop`` cycle; a
``synthesize-start``/``-chunk``/``-stop`` stream gives one cycle per complete
sentence (``daemon.text.sentences``), each after the first led by the pause the engine
puts between sentences (``daemon.sdk.audio.shaping``), and always ends in
``synthesize-stopped``.  Audio is framed in ``playback.SAMPLES_PER_CHUNK``
chunks; only the last chunk of a cycle is shorter.  Speech to text
(``transcribe``, ``audio-start``/``-chunk``/``-stop``) is ``listen.Listener``'s.
Unknown events are ignored.
Failures are ``error`` events; framing errors (malformed header, oversized data
or payload) also close the connection: the byte stream cannot be resynchronised.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from wyoming.asr import Transcribe
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

from daemon.protocols.wyoming.input import (
    FramingError,
    GuardedReader,
    Idle,
    Timeouts,
    peer_closed,
)
from daemon.protocols.wyoming.listen import INPUT_ENDED, Listener
from daemon.protocols.wyoming.playback import play
from daemon.protocols.wyoming.requests import (
    error_event,
    stream_request,
    synthesize_request,
)
from daemon.sdk.audio.shaping import COMMA_PAUSE_S, SENTENCE_PAUSE_S
from daemon.service.edge.clientlog import CLIENT_LOG
from daemon.service.edge.refusals import BadRequest, RequestError
from daemon.service.edge.requests import SynthesisRequest
from daemon.service.host import EngineHost
from daemon.service.scheduling.jobs import Job
from daemon.service.voices.voice import capabilities
from daemon.text.sentences import Sentence, SentenceStream

_LOGGER = logging.getLogger(__name__)
_CLOSE: Final = object()


@dataclass
class _Stream:
    #: the opening (voice, speaker, language); each sentence is this with its text
    request: SynthesisRequest
    sentences: SentenceStream
    failed: bool = False
    #: before the next sentence: the pause after the one queued last
    pause_s: float = 0.0
    #: what the voice puts between two sentences of one request
    sentence_pause_s: float = SENTENCE_PAUSE_S


@dataclass
class _Synth:
    request: SynthesisRequest
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
        self._listen = Listener(host, self.write_event)
        self._gone = False
        self._ended = INPUT_ENDED  # how the input ended, for what it leaves unanswered

    async def run(self) -> None:
        sender = asyncio.create_task(self._send_loop())
        try:
            await self._read_loop()
        finally:
            if self._gone and self._job is not None:
                self.host.cancel(self._job, "client disconnected")
            if self._gone:
                self._listen.cancel("client disconnected")
            self._work.put_nowait(_CLOSE)
            listen = self._listen.close(None if self._gone else self._ended)
            await asyncio.gather(sender, listen, return_exceptions=True)
            self.writer.close()

    def busy(self) -> bool:
        """Audio queued or being made for this client: waiting for it is not idle.

        An open text stream is not busy: a client that starts one and sends
        nothing for ``idle_timeout_s`` is let go like any other.
        """
        return self._job is not None or not self._work.empty() or self._listen.busy

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
                self._ended = str(exc)
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
        # The client decides how often this happens: one line per window.
        CLIENT_LOG.log(
            _LOGGER,
            "protocol error",
            logging.INFO,
            "wyoming client: %s; closing",
            message,
        )
        self._gone = True
        if self._job is not None:
            self.host.cancel(self._job, "protocol error")
        self._listen.cancel("protocol error")
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
                self._add_piece(self._stream, text, now)
        elif AudioChunk.is_type(event.type):
            await self._listen.chunk(event.data, event.payload)
        elif AudioStart.is_type(event.type):
            await self._listen.start(event.data)
        elif AudioStop.is_type(event.type):
            await self._listen.stop()
        elif Transcribe.is_type(event.type):
            await self._listen.transcribe(event.data)
        elif SynthesizeStop.is_type(event.type) and self._stream is not None:
            self._queue_sentences(self._stream.sentences.finish(), now)
            self._work.put_nowait(_Say(SynthesizeStopped().event(), self._stream))
            self._stream = None
        else:
            _LOGGER.debug("ignoring wyoming event %r", event.type)
        return True

    def _queue_synthesize(self, event: Event, now: float) -> None:
        try:
            request = synthesize_request(event.data)
        except BadRequest as exc:
            self._queue_error(exc)
            return
        self._work.put_nowait(_Synth(request, now))  # checked as it is submitted

    def _start_stream(self, event: Event) -> None:
        limit = self.host.cfg.limits.max_input_chars
        try:
            request = stream_request(event.data)
            voice = self.host.check(request)  # voice, speaker, language: now
        except RequestError as exc:
            # The stream still runs to its synthesize-stopped, speaking nothing:
            # it needs no voice (there may be none loaded at all).
            self._queue_error(exc)
            sentences = SentenceStream(limit)
            self._stream = _Stream(SynthesisRequest(None), sentences, failed=True)
            return
        # Pieces no longer than the voice takes, so no sentence is refused later.
        caps = capabilities(voice)
        limit = min(limit, caps.max_input)
        self._stream = _Stream(
            request, SentenceStream(int(limit)), sentence_pause_s=caps.sentence_pause_s
        )

    def _add_piece(self, s: _Stream, text: str, now: float) -> None:
        if not s.failed:
            try:  # NUL: refused at its position in this piece
                self.host.check(replace(s.request, text=text, piece=True))
            except RequestError as exc:  # one error; the stream ends as it would
                self._queue_error(exc)
                s.failed = True
        self._queue_sentences(s.sentences.add(text), now)

    def _queue_sentences(self, sentences: list[Sentence], now: float) -> None:
        s = self._stream
        assert s is not None
        if s.failed:
            return
        for sentence in sentences:
            request = replace(s.request, text=sentence.text)
            item = _Synth(request, now, s, s.pause_s)
            self._work.put_nowait(item)
            # What an engine puts after such a piece within one request.
            s.pause_s = s.sentence_pause_s if sentence.complete else COMMA_PAUSE_S

    def _queue_error(self, exc: RequestError) -> None:
        if isinstance(exc, BadRequest):
            self.host.metrics.request("wyoming", "bad_request")
        self._work.put_nowait(_Say(error_event(exc)))

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
        try:
            job = self.host.submit(item.request, "wyoming")
        except RequestError as exc:
            if isinstance(exc, BadRequest):
                self.host.metrics.request("wyoming", "bad_request")
            await self.write_event(error_event(exc))
            return False
        self._job = job
        try:
            return await play(
                job, self.write_event, self.host.metrics, item.received, item.pause_s
            )
        except BaseException:  # a write found the client gone, or we are cancelled
            self.host.cancel(job, "client disconnected")
            raise
        finally:
            self._job = None
