"""Wyoming text to speech on one connection: what is queued, and its sender.

``synthesize`` queues one request: exactly one ``audio-start``/
``audio-chunk``*/``audio-stop`` cycle.  A ``synthesize-start``/``-chunk``/
``-stop`` stream is checked (voice, speaker, language) when it starts, and
each complete sentence (``daemon.text.sentences``) is queued as it arrives:
one cycle per sentence, each after the first led by the pause the engine puts
between sentences (``daemon.sdk.audio.shaping``); the stream always ends in
``synthesize-stopped``.  A stream that fails sends one ``error`` and speaks
nothing more.  The sender task plays the queued work in order, refusals and
``synthesize-stopped`` in their place among it; playback.py frames the audio
in ``SAMPLES_PER_CHUNK`` chunks (only the last chunk of a cycle is shorter).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from wyoming.event import Event
from wyoming.tts import SynthesizeStopped

from daemon.protocols.wyoming.playback import play
from daemon.protocols.wyoming.requests import (
    error_event,
    stream_request,
    synthesize_request,
)
from daemon.sdk.audio.shaping import COMMA_PAUSE_S, SENTENCE_PAUSE_S
from daemon.service.edge.refusals import BadRequest, RequestError
from daemon.service.edge.requests import SynthesisRequest
from daemon.service.host import EngineHost
from daemon.service.scheduling.jobs import Job
from daemon.service.voices.voice import capabilities
from daemon.text.sentences import Sentence, SentenceStream

PROTOCOL: Final = "wyoming"
_CLOSE: Final = object()


class Connection(Protocol):
    """What the speaker needs of its connection (handler.py's
    ``WyomingHandler``)."""

    #: the client left (or the connection is ending): nothing more is sent
    gone: bool

    async def write_event(self, event: Event) -> None: ...


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


class Speaker:
    """The text-to-speech side of one Wyoming connection."""

    def __init__(self, host: EngineHost, conn: Connection) -> None:
        self.host, self._conn = host, conn
        self._work: asyncio.Queue[Any] = asyncio.Queue()
        #: the text stream open now (between synthesize-start and -stop)
        self.stream: _Stream | None = None
        #: the job being played
        self.job: Job | None = None

    @property
    def busy(self) -> bool:
        """Audio queued or being made for this client."""
        return self.job is not None or not self._work.empty()

    def cancel(self, reason: str) -> None:
        """Stop the job being played within one graph call."""
        if self.job is not None:
            self.host.cancel(self.job, reason)

    def close(self) -> None:
        """The sender stops after what it sends now."""
        self._work.put_nowait(_CLOSE)

    def synthesize(self, event: Event, now: float) -> None:
        if self.stream is not None:  # during a stream it duplicates the chunks
            return
        try:
            request = synthesize_request(event.data)
        except BadRequest as exc:
            self._queue_error(exc)
            return
        self._work.put_nowait(_Synth(request, now))  # checked as it is submitted

    def start_stream(self, event: Event) -> None:
        limit = self.host.cfg.limits.max_input_chars
        try:
            request = stream_request(event.data)
            voice = self.host.check(request)  # voice, speaker, language: now
        except RequestError as exc:
            # The stream still runs to its synthesize-stopped, speaking nothing:
            # it needs no voice (there may be none loaded at all).
            self._queue_error(exc)
            sentences = SentenceStream(limit)
            self.stream = _Stream(SynthesisRequest(None), sentences, failed=True)
            return
        # Pieces no longer than the voice takes, so no sentence is refused later.
        caps = capabilities(voice)
        limit = min(limit, caps.max_input)
        self.stream = _Stream(
            request, SentenceStream(int(limit)), sentence_pause_s=caps.sentence_pause_s
        )

    def add_piece(self, text: str, now: float) -> None:
        s = self.stream
        assert s is not None
        if not s.failed:
            try:  # NUL: refused at its position in this piece
                self.host.check(replace(s.request, text=text, piece=True))
            except RequestError as exc:  # one error; the stream ends as it would
                self._queue_error(exc)
                s.failed = True
        self._queue_sentences(s.sentences.add(text), now)

    def stop_stream(self, now: float) -> None:
        s = self.stream
        assert s is not None
        self._queue_sentences(s.sentences.finish(), now)
        self._work.put_nowait(_Say(SynthesizeStopped().event(), s))
        self.stream = None

    def _queue_sentences(self, sentences: list[Sentence], now: float) -> None:
        s = self.stream
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
            self.host.metrics.request(PROTOCOL, "bad_request")
        self._work.put_nowait(_Say(error_event(exc)))

    # -- sender ----------------------------------------------------------------

    async def send(self) -> None:
        """Play the queued work in order until ``close`` or the client leaves."""
        while True:
            item = await self._work.get()
            if item is _CLOSE or self._conn.gone:
                return
            try:
                if isinstance(item, _Say):
                    await self._conn.write_event(item.event)
                elif item.stream is None or not item.stream.failed:
                    ok = await self._synthesize(item)
                    if not ok and item.stream is not None:
                        item.stream.failed = True
            except ConnectionError:
                self._conn.gone = True
                self.cancel("client disconnected")
                return

    async def _synthesize(self, item: _Synth) -> bool:
        try:
            job = self.host.submit(item.request, PROTOCOL)
        except RequestError as exc:
            if isinstance(exc, BadRequest):
                self.host.metrics.request(PROTOCOL, "bad_request")
            await self._conn.write_event(error_event(exc))
            return False
        self.job = job
        write, metrics = self._conn.write_event, self.host.metrics
        try:
            return await play(job, write, metrics, item.received, item.pause_s)
        except BaseException:  # a write found the client gone, or we are cancelled
            self.host.cancel(job, "client disconnected")
            raise
        finally:
            self.job = None
