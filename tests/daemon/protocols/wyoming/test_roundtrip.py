"""TTS -> WAV -> ASR through one running service over Wyoming: the Piper demo
voice speaks (``synthesize``), the tiny Qwen3-ASR bundle transcribes the WAV
streamed back as ``audio-chunk``s, and the text equals the in-process engine's
for the same WAV fed whole (CPU backend; the service of the OpenAI round trip)."""

from __future__ import annotations

import asyncio
import io
import wave

import numpy as np
import pytest
import soundfile as sf
from wyoming.asr import Transcribe, Transcript, TranscriptChunk
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.tts import Synthesize, SynthesizeVoice

from tests.daemon.asr_service import JOE, JOE_RATE
from tests.daemon.conftest import Daemon
from tests.daemon.protocols.openai.test_roundtrip import ASR_MODEL, engine_text
from tests.daemon.protocols.wyoming.events import connect, describe

SENTENCE = "Hello, world. The quick brown fox jumps over the lazy dog."
READ_TIMEOUT_S = 300
CHUNK_BYTES = 2048  # 1024 s16le samples, as wyoming-satellite sends


async def _events(c: AsyncClient, last: str) -> list[Event]:
    out = []
    while True:
        e = await c.read_event()
        assert e is not None, f"closed after {[x.type for x in out]}"
        assert e.type != "error", e.data
        out.append(e)
        if e.type == last:
            return out


@pytest.fixture(scope="module")
def wav(speech_service: Daemon) -> bytes:
    """The sentence as Piper speaks it over Wyoming, written as a WAV."""

    async def go() -> list[Event]:
        c = await connect(speech_service, READ_TIMEOUT_S)
        await c.write_event(Synthesize(SENTENCE, SynthesizeVoice(JOE)).event())
        events = await _events(c, "audio-stop")
        await c.disconnect()
        return events

    chunks = [
        AudioChunk.from_event(e) for e in asyncio.run(go()) if e.type == "audio-chunk"
    ]
    assert {(x.rate, x.width, x.channels) for x in chunks} == {(JOE_RATE, 2, 1)}
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(JOE_RATE)
        w.writeframes(b"".join(x.audio for x in chunks))
    return out.getvalue()


def _transcribe(d: Daemon, wav: bytes, language: str | None = None) -> list[Event]:
    with wave.open(io.BytesIO(wav)) as w:
        rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
        pcm = w.readframes(w.getnframes())

    async def go() -> list[Event]:
        c = await connect(d, READ_TIMEOUT_S)
        await c.write_event(Transcribe(ASR_MODEL, language).event())
        await c.write_event(AudioStart(rate, width, channels).event())
        for i in range(0, len(pcm), CHUNK_BYTES):
            data = pcm[i : i + CHUNK_BYTES]
            await c.write_event(AudioChunk(rate, width, channels, data).event())
        await c.write_event(AudioStop().event())
        events = await _events(c, "transcript-stop")
        await c.disconnect()
        return events

    return asyncio.run(go())


def test_the_asr_program_is_described_beside_the_voice(speech_service):
    info = asyncio.run(describe(speech_service, READ_TIMEOUT_S))
    assert [v.name for v in info.tts[0].voices] == [JOE]
    (asr,) = info.asr
    assert asr.name == "qwen3-asr" and asr.supports_transcript_streaming
    (model,) = asr.models
    assert model.name == ASR_MODEL and "en" in model.languages


def test_speech_to_text_over_wyoming_equals_the_engine(
    speech_service, wav, tiny_asr_bundle
):
    pcm, rate = sf.read(io.BytesIO(wav), dtype="float32")  # int16 / 32768, as sent
    expected = engine_text(tiny_asr_bundle, pcm, rate)
    events = _transcribe(speech_service, wav)
    (t,) = [Transcript.from_event(e) for e in events if e.type == "transcript"]
    chunks = [
        TranscriptChunk.from_event(e).text
        for e in events
        if e.type == "transcript-chunk"
    ]
    assert expected  # a random-weight model still says something
    assert t.text == expected and "".join(chunks) == expected
    assert events[0].type == "transcript-start"


def test_a_language_hint_reaches_the_engine(speech_service, wav, tiny_asr_bundle):
    from daemon.sdk.asr import TranscriptionOptions, stream_text
    from daemon.sdk.local import open_engine

    pcm, rate = sf.read(io.BytesIO(wav), dtype="float32")
    with open_engine(tiny_asr_bundle, "cpu") as (engine, _):
        session = engine.open(TranscriptionOptions(language="zh"))
        try:
            expected = stream_text([*session.feed(pcm, rate), *session.finish()])
        finally:
            session.close()
    events = _transcribe(speech_service, wav, language="zh")
    (t,) = [Transcript.from_event(e) for e in events if e.type == "transcript"]
    assert t.text == expected and t.language == "Chinese"  # upstream's name
    assert np.isfinite(pcm).all()
