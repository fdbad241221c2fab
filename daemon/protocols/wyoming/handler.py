"""One Wyoming client connection (events and framing by the library ``wyoming``).

A reader loop stays responsive (``describe``/``ping`` are answered while audio
streams; end of input cancels the request of a client that left) and hands
each event to its side: text to speech (``synthesize``, ``synthesize-start``/
``-chunk``/``-stop``) is ``speak.Speaker``'s, whose sender task plays the
queued work in order; speech to text (``transcribe``, ``audio-start``/
``-chunk``/``-stop``) is ``listen.Listener``'s.  Unknown events are ignored.
Failures are ``error`` events; framing errors (malformed header, oversized data
or payload) also close the connection: the byte stream cannot be resynchronised.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

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
)

from daemon.protocols.wyoming.input import (
    FramingError,
    GuardedReader,
    Idle,
    Timeouts,
    peer_closed,
)
from daemon.protocols.wyoming.listen import INPUT_ENDED, Listener
from daemon.protocols.wyoming.speak import Speaker
from daemon.service.edge.clientlog import CLIENT_LOG
from daemon.service.host import EngineHost

_LOGGER = logging.getLogger(__name__)


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
        #: the client left (or the service hangs up): nothing more is sent
        self.gone = False
        self._speak = Speaker(host, self)
        self._listen = Listener(host, self.write_event)
        self._ended = INPUT_ENDED  # how the input ended, for what it leaves unanswered

    async def run(self) -> None:
        sender = asyncio.create_task(self._speak.send())
        try:
            await self._read_loop()
        finally:
            if self.gone:
                self._speak.cancel("client disconnected")
                self._listen.cancel("client disconnected")
            self._speak.close()
            listen = self._listen.close(None if self.gone else self._ended)
            await asyncio.gather(sender, listen, return_exceptions=True)
            self.writer.close()

    def busy(self) -> bool:
        """Audio queued or being made for this client: waiting for it is not idle.

        An open text stream is not busy: a client that starts one and sends
        nothing for ``idle_timeout_s`` is let go like any other.
        """
        return self._speak.busy or self._listen.busy

    def idle(self) -> bool:
        """Waiting between events with nothing in flight and no text stream open
        (one may pause between tokens): the cap may reclaim it for a newcomer."""
        return self._guard.waiting and not self.busy() and self._speak.stream is None

    def hang_up(self) -> None:
        """Service stopping: end the read loop; the sender stops after its item."""
        self.gone = True
        self.reader.feed_eof()

    async def _read_loop(self) -> None:
        while not self.gone:
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
                self.gone = True
                return
            if event is None:
                if self._guard.line.strip():
                    return await self._fatal("malformed event: not a JSON object")
                # End of input.  A client that closed (not just shut down its
                # writing side) is gone: stop its work within one graph call.
                self.gone = self.gone or peer_closed(self.writer)
                _LOGGER.debug("wyoming client: end of input (gone: %s)", self.gone)
                return
            if not isinstance(event.data, dict):
                return await self._fatal("malformed event: 'data' is not an object")
            try:
                await self.handle_event(event)
            except ConnectionError:  # an answer (info, pong) found the peer gone
                self.gone = True
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
        self.gone = True
        self._speak.cancel("protocol error")
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
            self._speak.synthesize(event, now)
        elif SynthesizeStart.is_type(event.type):
            self._speak.start_stream(event)
        elif SynthesizeChunk.is_type(event.type) and self._speak.stream is not None:
            text = event.data.get("text")
            if isinstance(text, str):
                self._speak.add_piece(text, now)
        elif AudioChunk.is_type(event.type):
            await self._listen.chunk(event.data, event.payload)
        elif AudioStart.is_type(event.type):
            await self._listen.start(event.data)
        elif AudioStop.is_type(event.type):
            await self._listen.stop()
        elif Transcribe.is_type(event.type):
            await self._listen.transcribe(event.data)
        elif SynthesizeStop.is_type(event.type) and self._speak.stream is not None:
            self._speak.stop_stream(now)
        else:
            _LOGGER.debug("ignoring wyoming event %r", event.type)
        return True
