"""Wyoming speech to text against a running service (tone voice + test-vad
model), driven by the ``wyoming`` library's client over a real Unix socket."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest
from wyoming.asr import Transcribe, Transcript, TranscriptChunk
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.tts import Synthesize

from tests.daemon.asr_service import ASR_MODEL, asr_daemon
from tests.daemon.conftest import Daemon
from tests.daemon.protocols.wyoming.events import connect, describe, until
from tests.daemon.sdk.test_asr import BURST_FINALS, BURSTS
from tests.daemon.vad_engine import burst_signal

READ_TIMEOUT_S = 30
RATE = 16000
#: Samples per audio-chunk, as wyoming-satellite sends them.
CHUNK = 1024
#: The service's audio cap in this module (s): low, so passing it is cheap.
MAX_AUDIO_S = 6.0
WHOLE = "".join(BURST_FINALS)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice, bins, onnx_dir) -> Iterator[Daemon]:
    yield from asr_daemon(
        tmp_path_factory.mktemp("listen"),
        test_voice,
        bins,
        onnx_dir,
        limits={"max_audio_s": MAX_AUDIO_S},
    )


def _int16(pcm: np.ndarray) -> bytes:
    return (np.clip(pcm, -1, 1) * 32767).astype("<i2").tobytes()


def _frames(pcm: np.ndarray, rate: int = RATE, channels: int = 1) -> list[AudioChunk]:
    """``pcm`` ([n] or [n, channels]) as audio-chunk events of CHUNK frames."""
    data = _int16(pcm)
    step = CHUNK * 2 * channels
    return [
        AudioChunk(rate, 2, channels, data[i : i + step])
        for i in range(0, len(data), step)
    ]


async def _send(c: AsyncClient, *events: Event) -> None:
    for e in events:
        await c.write_event(e)


async def _cycle(
    c: AsyncClient,
    pcm: np.ndarray,
    rate: int = RATE,
    channels: int = 1,
    transcribe: Transcribe | None = None,
) -> list[Event]:
    """One transcription; the events up to transcript-stop or an error."""
    if transcribe is not None:
        await c.write_event(transcribe.event())
    await c.write_event(AudioStart(rate, 2, channels).event())
    await _send(c, *(f.event() for f in _frames(pcm, rate, channels)))
    await c.write_event(AudioStop().event())
    return await until(c, "transcript-stop", "error")


def _text(events: list[Event]) -> tuple[str, str]:
    """(transcript text, the chunks joined)."""
    (t,) = [Transcript.from_event(e) for e in events if Transcript.is_type(e.type)]
    chunks = [
        TranscriptChunk.from_event(e).text
        for e in events
        if e.type == "transcript-chunk"
    ]
    return t.text, "".join(chunks)


def test_describe_lists_an_asr_program_beside_the_tts_program(daemon):
    info = asyncio.run(describe(daemon, READ_TIMEOUT_S))
    (tts,) = info.tts
    assert [v.name for v in tts.voices] == ["tone"]
    (asr,) = info.asr
    assert asr.name == "test-vad" and asr.installed
    assert asr.supports_transcript_streaming is True
    (model,) = asr.models
    assert model.name == ASR_MODEL and model.languages == ["en_US"]
    assert model.installed and model.attribution.name


def test_transcribe_streams_chunks_then_the_transcript(daemon):
    async def go() -> list[Event]:
        c = await connect(daemon, READ_TIMEOUT_S)
        events = await _cycle(
            c, burst_signal(BURSTS, RATE), transcribe=Transcribe(ASR_MODEL, "en")
        )
        await c.disconnect()
        return events

    events = asyncio.run(go())
    types = [e.type for e in events]
    assert types[0] == "transcript-start" and types[-2:] == [
        "transcript",
        "transcript-stop",
    ]
    assert set(types[1:-2]) == {"transcript-chunk"} and len(types) > 4
    text, joined = _text(events)
    assert text == joined == WHOLE  # chunks only append, and join up to it
    assert events[-2].data.get("language") == "English"  # upstream's name


@pytest.mark.parametrize("name", [ASR_MODEL, "test-vad"], ids=["model", "program"])
def test_transcribe_may_name_the_model_or_its_program(daemon, name):
    async def go() -> list[Event]:
        c = await connect(daemon, READ_TIMEOUT_S)
        events = await _cycle(
            c, burst_signal(BURSTS, RATE), transcribe=Transcribe(name)
        )
        await c.disconnect()
        return events

    assert _text(asyncio.run(go()))[0] == WHOLE


def test_chunks_arrive_while_the_client_still_speaks(daemon):
    pcm = burst_signal(BURSTS, RATE)

    async def go() -> list[str]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(AudioStart(RATE, 2, 1).event())  # no transcribe: default
        await _send(c, *(f.event() for f in _frames(pcm[: round(1.5 * RATE)])))
        early = await until(c, "transcript-chunk")  # before audio-stop
        await _send(c, *(f.event() for f in _frames(pcm[round(1.5 * RATE) :])))
        await c.write_event(AudioStop().event())
        rest = await until(c, "transcript-stop")
        await c.disconnect()
        return [e.type for e in early], _text(early + rest)

    early, (text, joined) = asyncio.run(go())
    assert early == ["transcript-start", "transcript-chunk"]
    assert text == joined == WHOLE


@pytest.mark.parametrize(("rate", "channels"), [(48000, 2), (192000, 8), (8000, 1)])
def test_any_rate_and_up_to_8_channels_transcribe_alike(daemon, rate, channels):
    mono = burst_signal(BURSTS, rate)
    frames = np.repeat(mono[:, None], channels, axis=1) if channels > 1 else mono

    async def go() -> list[Event]:
        c = await connect(daemon, READ_TIMEOUT_S)
        events = await _cycle(c, frames, rate, channels)
        await c.disconnect()
        return events

    assert _text(asyncio.run(go()))[0] == WHOLE


@pytest.mark.parametrize(
    "pcm",
    [np.zeros(0, np.float32), np.zeros(RATE, np.float32)],
    ids=["empty", "silence"],
)
def test_empty_audio_and_silence_give_an_empty_transcript(daemon, pcm):
    async def go() -> list[Event]:
        c = await connect(daemon, READ_TIMEOUT_S)
        events = await _cycle(c, pcm)
        await c.disconnect()
        return events

    events = asyncio.run(go())
    assert [e.type for e in events] == [
        "transcript-start",
        "transcript",
        "transcript-stop",
    ]
    assert _text(events) == ("", "")


def _bad_rate_chunk() -> list[Event]:
    good = _frames(burst_signal(BURSTS, RATE))
    bad = AudioChunk(8000, 2, 1, good[3].audio)
    return [AudioStart(RATE, 2, 1).event(), *(f.event() for f in good[:3]), bad.event()]


BAD = {
    "chunk rate": (
        _bad_rate_chunk,
        "invalid_value",
        "rate: expected 16000 (as in audio-start), found 8000",
    ),
    "chunk before start": (
        lambda: [AudioChunk(RATE, 2, 1, bytes(2048)).event()],
        "bad_request",
        "audio-chunk before audio-start",
    ),
    "9 channels": (
        lambda: [
            AudioStart(RATE, 2, 9).event(),
            AudioChunk(RATE, 2, 9, bytes(18)).event(),
        ],
        "invalid_value",
        "channels: expected an integer number of channels in [1, 8], found 9",
    ),
    "300 kHz": (
        lambda: [AudioStart(300000, 2, 1).event()],
        "invalid_value",
        "rate: expected an integer rate in [8000, 192000] Hz, found 300000",
    ),
    "24-bit": (
        lambda: [AudioStart(RATE, 3, 1).event()],
        "invalid_value",
        "width: expected 2 (16-bit samples), found 3",
    ),
    "over the cap": (
        lambda: [
            AudioStart(RATE, 2, 1).event(),
            *(
                f.event()
                for f in _frames(np.zeros(round((MAX_AUDIO_S + 1) * RATE), np.float32))
            ),
        ],
        "invalid_value",
        "audio: expected at most 6 s of audio, found 6.02 s",
    ),
    "half a frame": (
        lambda: [
            AudioStart(RATE, 2, 2).event(),
            AudioChunk(RATE, 2, 2, bytes(6)).event(),
        ],
        "invalid_value",
        "payload: expected whole frames of 4 bytes (2 x 16-bit), found 6 bytes",
    ),
    "unknown model": (
        lambda: [Transcribe("nobody").event(), AudioStart(RATE, 2, 1).event()],
        "voice_not_found",
        "name: expected one of",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_audio_is_one_clear_error_and_the_connection_serves_on(daemon, case):
    make, code, text = BAD[case]

    async def go() -> tuple[list[Event], list[Event], list[Event]]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await _send(c, *make())
        await c.write_event(AudioStop().event())
        refused = await until(c, "error")
        again = await _cycle(c, burst_signal(BURSTS, RATE))  # the same connection
        await c.write_event(Synthesize("still speaking").event())
        spoken = await until(c, "audio-stop")
        await c.disconnect()
        return refused, again, spoken

    refused, again, spoken = asyncio.run(go())
    error = Error.from_event(refused[-1])
    assert error.code == code and text in error.text, error
    assert [e.type for e in refused].count("error") == 1
    assert "transcript" not in [e.type for e in refused]
    assert _text(again)[0] == WHOLE
    assert any(e.type == "audio-chunk" for e in spoken)


def test_a_client_leaving_mid_stream_cancels_its_session(daemon):
    key = 'hexvoice_requests_total{outcome="cancelled",protocol="wyoming"}'
    before = daemon.metrics().get(key, 0.0)
    pcm = burst_signal(BURSTS, RATE)

    async def go() -> list[Event]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(AudioStart(RATE, 2, 1).event())
        await _send(c, *(f.event() for f in _frames(pcm[: RATE // 2])))
        await until(c, "transcript-start")
        await c.disconnect()  # mid-stream, no audio-stop
        await asyncio.sleep(0.5)
        other = await connect(daemon, READ_TIMEOUT_S)
        events = await _cycle(other, pcm)
        await other.disconnect()
        return events

    events = asyncio.run(go())
    assert _text(events)[0] == WHOLE  # the service serves on
    assert daemon.metrics().get(key, 0.0) == before + 1
