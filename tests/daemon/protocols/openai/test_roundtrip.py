"""TTS -> WAV -> ASR through one running service over the official OpenAI SDK:
the Piper demo voice speaks, the tiny Qwen3-ASR bundle transcribes, and the
text equals the in-process engine's for the same WAV fed whole (CPU backend)."""

from __future__ import annotations

import io

import numpy as np
import openai
import pytest
import soundfile as sf

from daemon.sdk.asr import TranscriptionOptions, stream_text
from daemon.sdk.local import open_engine
from tests.daemon import voice_clients
from tests.daemon.asr_service import JOE, JOE_RATE
from tests.daemon.conftest import Daemon

SENTENCE = "Hello, world. The quick brown fox jumps over the lazy dog."
ASR_MODEL = "qwen3-asr-tiny"  # the tiny bundle's name
#: Per SDK call: synthesis and transcription both run on the simulator here.
SDK_TIMEOUT_S = 300.0


@pytest.fixture(scope="module")
def sdk(speech_service: Daemon) -> openai.OpenAI:
    return voice_clients.sdk(speech_service, timeout=SDK_TIMEOUT_S)


@pytest.fixture(scope="module")
def wav(sdk: openai.OpenAI) -> bytes:
    spoken = sdk.audio.speech.create(
        model="tts-1",
        voice=JOE,
        input=SENTENCE,
        response_format="wav",
        extra_body={"stream": False},
    ).read()
    info = sf.info(io.BytesIO(spoken))
    assert info.samplerate == JOE_RATE and info.duration > 2.0
    return spoken


def engine_text(bundle, pcm: np.ndarray, rate: int) -> str:
    """The engine's own text for ``pcm``, fed in one piece, in this process."""
    with open_engine(bundle, "cpu") as (engine, _):
        session = engine.open(TranscriptionOptions())
        try:
            out = [*session.feed(pcm, rate), *session.finish()]
        finally:
            session.close()
    return stream_text(out)


@pytest.fixture(scope="module")
def in_process(wav: bytes, tiny_asr_bundle) -> str:
    return engine_text(tiny_asr_bundle, *sf.read(io.BytesIO(wav), dtype="float32"))


def test_speech_to_text_over_the_sdk_equals_the_engine(sdk, wav, in_process):
    assert in_process  # a random-weight model still says something
    for model in (ASR_MODEL, "whisper-1"):
        out = sdk.audio.transcriptions.create(model=model, file=("hello.wav", wav))
        assert out.text == in_process
    verbose = sdk.audio.transcriptions.create(
        model=ASR_MODEL, file=("hello.wav", wav), response_format="verbose_json"
    )
    assert verbose.text == in_process
    assert verbose.duration == pytest.approx(
        sf.info(io.BytesIO(wav)).duration, abs=1e-3
    )
    assert "".join(s.text for s in verbose.segments) == in_process


def test_streamed_deltas_add_up_to_the_engines_text(sdk, wav, in_process):
    events = list(
        sdk.audio.transcriptions.create(
            model=ASR_MODEL, file=("hello.wav", wav), stream=True
        )
    )
    *deltas, done = events
    assert done.type == "transcript.text.done" and done.text == in_process
    assert "".join(e.delta for e in deltas) == in_process


def test_48k_stereo_through_the_service_equals_the_engine(sdk, wav, tiny_asr_bundle):
    import soxr

    pcm, rate = sf.read(io.BytesIO(wav), dtype="float32")
    up = soxr.resample(pcm, rate, 48000).astype(np.float32)
    stereo = np.stack([up, 0.5 * up], axis=1)
    flac = io.BytesIO()
    sf.write(flac, stereo, 48000, format="FLAC", subtype="PCM_24")
    decoded, _ = sf.read(io.BytesIO(flac.getvalue()), dtype="float32")
    out = sdk.audio.transcriptions.create(
        model=ASR_MODEL, file=("hello.flac", flac.getvalue())
    )
    assert out.text == engine_text(tiny_asr_bundle, decoded, 48000)
