"""A Piper voice through the wire says what piper-tts says (CPU backend).

``hexvoice serve --backend cpu`` on the joe voice, with the demo voice's old
encoder buckets (64, 128 ids: the CPU backend must take longer sentences whole
anyway), noise scales 0 so its audio is a pure function of the text. The bytes
the OpenAI route (the ``openai`` SDK; wav, and pcm at OpenAI's 24 kHz) and
Wyoming ``synthesize`` (the ``wyoming`` client) send must be piper-tts's own
``PiperVoice.synthesize`` output as a user turns it into int16
(``audio_int16_bytes``, its defaults: each sentence peak-normalized, no
silence between sentences): the same length, at least 80 dB SNR.
"""

from __future__ import annotations

import asyncio
import io
import wave
from typing import Any, Final

import httpx
import numpy as np
import openai
import pytest
import yaml
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

from daemon.protocols.openai.encoders import OPENAI_PCM_RATE
from daemon.sdk.audio.shaping import output_resampler, to_int16
from scripts.common.parity import snr_db
from tests.daemon.conftest import Daemon, ServiceVoice, serving
from tests.piper_bundles import CPU_OPTIONS, bundle_dir, voice_path

pytest.importorskip("piper")
VOICE: Final = "en_US-joe-medium"
RATE: Final = 22050
READ_TIMEOUT_S: Final = 60.0
#: Sentences of 50..250 phoneme ids (in brackets, per sentence), most past the
#: old demo voice's 128, and paragraphs of two or three sentences.
TEXTS: Final = (
    "The quick brown fox jumps over the lazy dog.",  # [109]
    "Is it going to rain tomorrow, or will the sun come out?",  # [121]
    "Turn off the kitchen lights at eleven thirty, and lock the back door.",  # [145]
    "She sells seashells by the seashore, and the shells she sells are surely "
    "seashells.",  # [161]
    "In the beginning the universe was created; this has made a lot of people "
    "very angry.",  # [189]
    "The meeting has been moved to Thursday afternoon because the projector in "
    "the main conference room is still broken.",  # [235]
    "It was the best of times, it was the worst of times, it was the age of "
    "wisdom, it was the age of foolishness.",  # [225]
    "The train to Boston leaves at half past seven from platform nine, so we "
    "should leave the house by seven.",  # [227]
    "Please remind me to call the dentist on Monday morning. I need to "
    "reschedule my appointment.",  # [129, 83]
    "Good morning to all of you! The weather today is sunny with a high of "
    "twenty four degrees. Tomorrow brings rain.",  # [61, 129, 49]
    "Set a timer for ten minutes. Then play some quiet music in the living room, "
    "please.",  # [67, 121]
    "Hello there, my old friend. How are you doing today? I hope everything is "
    "going well with your new project at work.",  # [63, 57, 137]
)
#: The old demo voice's encoder buckets (scripts/demo_job/make_voice.py had them).
OLD_DEMO_BUCKETS: Final = (64, 128)
#: piper's samples, bit for bit but for a rare one-step rounding in a peak.
MIN_SNR_DB: Final = 80.0
#: Texts sent as pcm too (24 kHz: resampled on both sides, so a few suffice).
PCM_TEXTS: Final = TEXTS[8:10]


@pytest.fixture(scope="module")
def joe(pytestconfig: pytest.Config, tmp_path_factory) -> ServiceVoice:
    """The joe CPU bundle with the old demo buckets and noise scales 0 (its
    graphs shared by symlink)."""
    src = bundle_dir(pytestconfig, CPU_OPTIONS)
    dst = tmp_path_factory.mktemp("joe_small")
    for entry in src.iterdir():
        if entry.name != "voice.yaml":
            (dst / entry.name).symlink_to(entry)
    manifest = yaml.safe_load((src / "voice.yaml").read_text())
    kept = {f"enc_P{p}" for p in OLD_DEMO_BUCKETS}
    manifest["graphs"] = {
        k: g
        for k, g in manifest["graphs"].items()
        if not k.startswith("enc_") or k in kept
    }
    manifest["params"].update(
        noise_scale=0.0, noise_w=0.0, phoneme_buckets=list(OLD_DEMO_BUCKETS)
    )
    (dst / "voice.yaml").write_text(yaml.safe_dump(manifest))
    return ServiceVoice(dst, manifest["name"], RATE, {})


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, joe: ServiceVoice):
    yield from serving(
        tmp_path_factory.mktemp("parity"), joe, engine={"backend": "cpu"}
    )


@pytest.fixture(scope="module")
def piper_int16() -> dict[str, np.ndarray]:
    """What piper-tts's synthesize gives a user for each text, as int16."""
    from piper import PiperVoice, SynthesisConfig

    voice = PiperVoice.load(voice_path())
    still = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    out = {}
    for text in TEXTS:
        pcm = b"".join(c.audio_int16_bytes for c in voice.synthesize(text, still))
        out[text] = np.frombuffer(pcm, "<i2")
    return out


def _sdk(d: Daemon) -> openai.OpenAI:
    http = httpx.Client(transport=httpx.HTTPTransport(uds=str(d.http)))
    return openai.OpenAI(base_url="http://localhost/v1", api_key="unused",
                         max_retries=0, http_client=http)  # fmt: skip


def _speech(sdk: openai.OpenAI, text: str, fmt: Any) -> bytes:
    return sdk.audio.speech.create(
        model="tts-1", voice=VOICE, input=text, response_format=fmt
    ).read()


async def _wyoming(d: Daemon, text: str) -> tuple[int, np.ndarray]:
    async with AsyncClient.from_uri(d.uri) as c:
        await c.write_event(Synthesize(text=text).event())
        rate, pcm = 0, []
        while True:
            e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
            assert e is not None and e.type != "error", e
            if AudioStart.is_type(e.type):
                rate = AudioStart.from_event(e).rate
            elif AudioChunk.is_type(e.type):
                pcm.append(np.frombuffer(AudioChunk.from_event(e).audio, "<i2"))
            elif e.type == "audio-stop":
                return rate, np.concatenate(pcm)


def _same(want: np.ndarray, got: np.ndarray, text: str) -> None:
    assert len(got) == len(want), (
        f"{(len(got) - len(want)) / RATE:+.3f} s vs piper: {text[:40]!r}"
    )
    snr = snr_db(want.astype(np.float64), got.astype(np.float64))
    assert snr >= MIN_SNR_DB, f"{snr:.1f} dB vs piper: {text[:40]!r}"


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_http_wav_is_pipers_audio(daemon: Daemon, piper_int16, text: str) -> None:
    data = _speech(_sdk(daemon), text, "wav")
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getframerate(), w.getsampwidth(), w.getnchannels()) == (RATE, 2, 1)
    _same(piper_int16[text], np.frombuffer(data[44:], "<i2"), text)


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_wyoming_synthesize_is_pipers_audio(
    daemon: Daemon, piper_int16, text: str
) -> None:
    rate, got = asyncio.run(_wyoming(daemon, text))
    assert rate == RATE
    _same(piper_int16[text], got, text)


@pytest.mark.parametrize("text", PCM_TEXTS, ids=range(len(PCM_TEXTS)))
def test_http_pcm_is_pipers_audio_at_24_khz(
    daemon: Daemon, piper_int16, text: str
) -> None:
    """piper's int16 resampled to OpenAI's pcm rate as the service resamples
    (libsoxr, whole), then int16 again."""
    got = np.frombuffer(_speech(_sdk(daemon), text, "pcm"), "<i2")
    ours = piper_int16[text].astype(np.float32) / np.float32(32767)
    resampled = output_resampler(RATE, OPENAI_PCM_RATE).push(ours, last=True)
    want = np.frombuffer(to_int16(resampled), "<i2")
    assert len(got) == len(want)
    assert snr_db(want.astype(np.float64), got.astype(np.float64)) >= MIN_SNR_DB
