"""The service with a real voice (Piper en_US joe, CPU backend) and real clients.

The other service tests run a cheap test engine; this one proves the same paths
carry real speech: Wyoming and the OpenAI SDK both get the audio the engine makes
in-process for the same text, and Wyoming ``info`` describes the real voice.
"""

from __future__ import annotations

import asyncio
import io
import wave

import httpx
import numpy as np
import openai
import pytest
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncClient
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize

from daemon.protocols.wyoming.server import project_url
from daemon.sdk.local import open_engine
from daemon.sdk.tts import SynthesisOptions
from scripts.common.parity import snr_db
from tests.daemon.conftest import Daemon, ServiceVoice, serving
from tests.piper_bundles import CPU_OPTIONS, bundle_dir

pytest.importorskip("piper")
TEXT = "Hello world."
VOICE = "en_US-joe-medium"
READ_TIMEOUT_S = 60.0
#: Same seed → same noise: the service must deliver the engine's exact samples.
SEED = 7


@pytest.fixture(scope="module")
def joe(pytestconfig: pytest.Config) -> ServiceVoice:
    return ServiceVoice(bundle_dir(pytestconfig, CPU_OPTIONS), VOICE, 22050, {})


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, joe: ServiceVoice):
    yield from serving(tmp_path_factory.mktemp("joe"), joe, engine={"backend": "cpu"})


@pytest.fixture(scope="module")
def in_process(joe: ServiceVoice) -> np.ndarray:
    """int16 audio the engine makes for TEXT without the service."""
    with open_engine(joe.bundle, "cpu") as (engine, _):
        chunks = engine.synthesize(TEXT, SynthesisOptions(seed=SEED))
        audio = np.concatenate([c.audio for c in chunks])
    return np.rint(np.clip(audio, -1, 1) * 32767).astype(np.int16)


def test_wyoming_describes_the_real_voice(daemon: Daemon):
    async def go() -> Info:
        async with AsyncClient.from_uri(daemon.uri) as c:
            await c.write_event(Describe().event())
            while True:
                e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
                if Info.is_type(e.type):
                    return Info.from_event(e)

    (program,) = asyncio.run(go()).tts
    attribution = program.attribution
    assert (attribution.name, attribution.url) == ("hexvoice", project_url())
    (voice,) = program.voices
    assert voice.name == VOICE and voice.languages == ["en_US"]
    # The voice's own credit, from the MODEL_CARD the voice package ships.
    assert (voice.attribution.name, voice.attribution.url) == (
        "en_US-joe-medium dataset (CC0)",
        "https://github.com/NabuCasa/voice-datasets",
    )


def test_openai_sdk_gets_the_engines_exact_samples(daemon: Daemon, in_process):
    http = httpx.Client(transport=httpx.HTTPTransport(uds=str(daemon.http)))
    sdk = openai.OpenAI(base_url="http://localhost/v1", api_key="unused",
                        max_retries=0, http_client=http)  # fmt: skip
    data = sdk.audio.speech.create(
        model="tts-1", voice=VOICE, input=TEXT, response_format="wav",
        extra_body={"seed": SEED},
    ).read()  # fmt: skip
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getframerate(), w.getsampwidth()) == (22050, 2)
    got = np.frombuffer(data[44:], "<i2")
    assert len(got) == len(in_process)
    assert snr_db(in_process, got) > 90


def test_wyoming_carries_real_speech(daemon: Daemon, in_process):
    # Wyoming has no seed: the noise differs, so compare length and loudness.
    async def wyoming() -> tuple[int, np.ndarray]:
        async with AsyncClient.from_uri(daemon.uri) as c:
            await c.write_event(Synthesize(text=TEXT).event())
            rate, pcm = 0, []
            while True:
                e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
                if AudioStart.is_type(e.type):
                    rate = AudioStart.from_event(e).rate
                elif AudioChunk.is_type(e.type):
                    pcm.append(np.frombuffer(AudioChunk.from_event(e).audio, "<i2"))
                elif e.type == "audio-stop":
                    return rate, np.concatenate(pcm)

    rate, got = asyncio.run(wyoming())
    assert rate == 22050
    assert 0.7 < len(got) / len(in_process) < 1.3  # noise_w varies durations
    rms = np.sqrt(np.mean(got.astype(np.float64) ** 2))
    ref_rms = np.sqrt(np.mean(in_process.astype(np.float64) ** 2))
    assert 0.5 < rms / ref_rms < 2.0
    assert snr_db(in_process[: len(got)], got[: len(in_process)]) < 60  # not a copy
