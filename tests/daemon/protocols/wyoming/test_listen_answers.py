"""Every Wyoming ``transcribe`` gets one answer, in order: a transcript or one
coded ``error``, and nothing of its session after that error.

Each case sends a sequence with the ``wyoming`` library's client over a real
Unix socket and asserts the exact events that come back; a ``ping`` after the
sequence marks its end (the reader answers it in turn), and a silent cycle
after that shows nothing of the case is still on its way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.ping import Ping

from tests.daemon.asr_service import ASR_MODEL, asr_daemon
from tests.daemon.conftest import Daemon
from tests.daemon.protocols.wyoming.events import connect, until
from tests.daemon.sdk.test_asr import BURSTS
from tests.daemon.vad_engine import burst_signal

#: Every answer here is due within a step or two of the worker: a hang fails fast.
READ_TIMEOUT_S = 5
RATE = 16000
#: Samples per audio-chunk, as wyoming-satellite sends them.
CHUNK = 1024
#: Short, so the idle case is cheap; every other case keeps its connection busy.
IDLE_S = 2.0
SILENT = AudioChunk(RATE, 2, 1, bytes(2 * CHUNK)).event()
#: A silent cycle's whole answer.
EMPTY = ["transcript-start", "transcript", "transcript-stop"]
RATE_CHANGE = "rate: expected 16000 (as in audio-start), found 8000"
NO_MODEL = "no speech-recognition model is loaded"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice, bins, onnx_dir) -> Iterator[Daemon]:
    yield from asr_daemon(
        tmp_path_factory.mktemp("answers"),
        test_voice,
        bins,
        onnx_dir,
        limits={"idle_timeout_s": IDLE_S},
    )


async def _exchange(d: Daemon, *events: Event, wait: bool = False) -> list[Event]:
    """What ``events``, then a ping and a silent cycle, are answered with;
    ``wait``: for a transcript-stop before the ping (a transcript is sent as the
    session makes it, so a ping sent at once may overtake it)."""
    c = await connect(d, READ_TIMEOUT_S)
    for e in events:
        await c.write_event(e)
    out = await until(c, "transcript-stop") if wait else []
    await c.write_event(Ping().event())
    out += await until(c, "pong")
    for e in (AudioStart(RATE, 2, 1).event(), SILENT, AudioStop().event()):
        await c.write_event(e)
    out += await until(c, "transcript-stop", "error")
    await c.disconnect()
    return out


def _types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def _error(events: list[Event]) -> Error:
    (e,) = [Error.from_event(e) for e in events if Error.is_type(e.type)]
    return e


def _start() -> Event:
    return AudioStart(RATE, 2, 1).event()


CHANGES = {
    "rate": (AudioChunk(8000, 2, 1, bytes(2048)), RATE_CHANGE),
    "channels": (
        AudioChunk(RATE, 2, 2, bytes(4096)),
        "channels: expected 1 (as in audio-start), found 2",
    ),
    "width": (AudioChunk(RATE, 3, 1, bytes(3072)), "width: expected 2 (16-bit"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_format_change_mid_stream_ends_the_session_at_its_error(daemon, change):
    bad, text = CHANGES[change]
    events = asyncio.run(
        _exchange(daemon, _start(), SILENT, bad.event(), SILENT, AudioStop().event())
    )
    assert _types(events) == ["transcript-start", "error", "pong", *EMPTY]
    error = _error(events)
    assert error.code == "invalid_value" and text in error.text, error


def test_transcribe_and_audio_stop_without_audio_start_is_an_empty_transcript(daemon):
    ask = Transcribe(ASR_MODEL, "en").event()
    events = asyncio.run(_exchange(daemon, ask, AudioStop().event()))
    assert _types(events) == [*EMPTY, "pong", *EMPTY]
    assert [e.data.get("language") for e in events[:2]] == ["English"] * 2
    assert events[1].data["text"] == ""


def test_an_audio_stop_nothing_asked_for_is_not_answered(daemon):
    stop = AudioStop().event()
    events = asyncio.run(_exchange(daemon, _start(), SILENT, stop, stop, wait=True))
    assert _types(events) == [*EMPTY, "pong", *EMPTY]  # the second stop: nothing


REFUSED = {
    "unknown model": (Transcribe("nobody"), "voice_not_found", "name: expected one"),
    "a tts voice": (
        Transcribe("tone"),
        "voice_not_found",
        "name: expected a speech-recognition model",
    ),
    "unknown language": (
        Transcribe(language="xx"),
        "unsupported_language",
        "language: expected a language",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_transcribe_is_answered_at_once_and_its_audio_stays_silent(
    daemon, case
):
    ask, code, text = REFUSED[case]

    async def go() -> tuple[list[Event], list[Event]]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(ask.event())
        at_once = await until(c, "error")  # before any audio
        await c.disconnect()
        audio = (_start(), SILENT, AudioStop().event())
        return at_once, await _exchange(daemon, ask.event(), *audio)

    at_once, events = asyncio.run(go())
    assert _types(at_once) == ["error"]
    assert _types(events) == ["error", "pong", *EMPTY]
    error = _error(events)
    assert error.code == code and text in error.text, error


def test_a_chunk_before_audio_start_answers_its_transcribe_once(daemon):
    chunk = SILENT
    events = asyncio.run(
        _exchange(daemon, Transcribe().event(), chunk, chunk, AudioStop().event())
    )
    assert _types(events) == ["error", "pong", *EMPTY]
    assert _error(events).text == "audio-chunk before audio-start"


def test_a_second_audio_start_ends_the_first_session_at_its_error(daemon):
    events = asyncio.run(
        _exchange(
            daemon, _start(), SILENT, _start(), SILENT, AudioStop().event(), wait=True
        )
    )
    assert _types(events) == ["transcript-start", "error", *EMPTY, "pong", *EMPTY]
    assert "audio-start while a transcription is open" in _error(events).text


def test_audio_start_after_a_refused_chunk_opens_a_new_session_without_error(daemon):
    bad = AudioChunk(8000, 2, 1, bytes(2048)).event()
    events = asyncio.run(
        _exchange(
            daemon, _start(), bad, _start(), SILENT, AudioStop().event(), wait=True
        )
    )
    assert _types(events) == ["transcript-start", "error", *EMPTY, "pong", *EMPTY]
    assert _error(events).text == RATE_CHANGE


def test_a_refusal_for_the_next_cycle_follows_the_last_transcript(daemon):
    pcm = (burst_signal(BURSTS, RATE) * 32767).astype("<i2").tobytes()
    chunks = [
        AudioChunk(RATE, 2, 1, pcm[i : i + 2 * CHUNK]).event()
        for i in range(0, len(pcm), 2 * CHUNK)
    ]
    stop = AudioStop().event()
    events = asyncio.run(
        _exchange(daemon, _start(), *chunks, stop, SILENT, stop, wait=True)
    )
    types = _types(events)
    assert types.index("transcript-stop") < types.index("error"), types
    assert types[types.index("error") :] == ["error", "pong", *EMPTY]


async def _half_closed(d: Daemon, *events: Event) -> list[Event]:
    """What ``events`` get once the client shut its writing side."""
    c = await connect(d, READ_TIMEOUT_S)
    for e in events:
        await c.write_event(e)
    assert c._writer is not None  # the library keeps its transport there
    c._writer.write_eof()
    out = []
    while (e := await c.read_event()) is not None:
        out.append(e)
    await c.disconnect()
    return out


def test_input_ending_mid_stream_is_one_error_not_a_wait(daemon):
    events = asyncio.run(_half_closed(daemon, _start(), SILENT))
    assert _types(events) == ["transcript-start", "error"]
    assert _error(events).text == "input ended before audio-stop"


def test_input_ending_after_transcribe_is_one_error(daemon):
    events = asyncio.run(_half_closed(daemon, Transcribe(ASR_MODEL).event()))
    assert _types(events) == ["error"]
    assert _error(events).code == "bad_request"


def test_a_transcribe_left_idle_is_answered_before_the_connection_closes(daemon):
    async def go() -> list[Event]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(Transcribe().event())
        c.read_timeout = IDLE_S + READ_TIMEOUT_S
        out = []
        while (e := await c.read_event()) is not None:
            out.append(e)
        await c.disconnect()
        return out

    events = asyncio.run(go())
    assert _types(events) == ["error"]
    assert _error(events).text == f"idle for {IDLE_S:g} s before audio-stop"


def test_a_client_leaving_during_its_transcript_cancels_the_session(daemon):
    """Gone after audio-stop: the queued audio is not transcribed for nobody."""
    key = 'hexvoice_requests_total{outcome="cancelled",protocol="wyoming"}'
    before = daemon.metrics().get(key, 0.0)
    second = np.zeros(RATE, "<i2").tobytes()  # 1 s chunks: a long queue to cut

    async def go() -> None:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(_start())
        for _ in range(40):
            await c.write_event(AudioChunk(RATE, 2, 1, second).event())
        await c.write_event(AudioStop().event())
        await c.disconnect()

    asyncio.run(go())
    for _ in range(50):  # the session ends within a graph call or so
        if daemon.metrics().get(key, 0.0) > before:
            break
        asyncio.run(asyncio.sleep(0.1))
    assert daemon.metrics().get(key, 0.0) == before + 1


@pytest.fixture(scope="module")
def tts_only(daemon_factory) -> Daemon:
    return daemon_factory("ttsonly")


@pytest.mark.parametrize("ask", [True, False], ids=["transcribe", "audio-start"])
def test_a_service_without_asr_says_so_once(tts_only, ask):
    async def go() -> tuple[Info, list[Event]]:
        c = await connect(tts_only, READ_TIMEOUT_S)
        await c.write_event(Describe().event())
        (info,) = await until(c, "info")
        events: list[Event] = []
        if ask:
            await c.write_event(Transcribe().event())
            events = await until(c, "error")  # at once, before any audio
        for e in (_start(), SILENT, AudioStop().event(), Ping().event()):
            await c.write_event(e)
        events += await until(c, "pong")
        await c.disconnect()
        return Info.from_event(info), events

    info, events = asyncio.run(go())
    assert info.asr == []
    assert _types(events) == ["error", "pong"]
    error = _error(events)
    assert error.code == "voice_not_found" and NO_MODEL in error.text, error
