"""Qwen3-TTS behind the service, end to end: the tiny CustomVoice and Base
bundles (tests/qwen3_bundles.py, the real build_tts_qwen3) served on the CPU
backend; a voice cloned over HTTP from a clip (the x-vector computed by the
engine's speaker graph on the NPU worker), spoken through the ``openai`` SDK and
Wyoming, kept across a restart bit for bit, removed."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openai
import pytest
import soundfile as sf

from tests.daemon.conftest import Daemon
from tests.daemon.voice_clients import cloning_setup, info, sdk, serving, wav_bytes

RATE = 24000
#: A clip at another rate than the model's (the engine resamples), long enough
#: for the tiny base bundle's smallest x-vector bucket.
CLIP_SECONDS, CLIP_RATE = 5.0, 22050
TEXT = "Hello there."
#: seconds the SDK waits for speech (the tiny bundle on the CPU backend)
SDK_TIMEOUT_S = 120


def clip() -> bytes:
    t = np.arange(round(CLIP_SECONDS * CLIP_RATE)) / CLIP_RATE
    phase = 2 * np.pi * np.cumsum(150 + 30 * np.sin(2 * np.pi * 0.5 * t)) / CLIP_RATE
    voiced = sum(np.sin(k * phase) / k for k in range(1, 8))
    pcm = (0.2 * voiced * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2)).astype(
        np.float32
    )
    return wav_bytes(pcm, CLIP_RATE)


@pytest.fixture(scope="module")
def setup(tmp_path_factory, tiny_tts_custom_bundle: Path, tiny_tts_base_bundle: Path):
    root = tmp_path_factory.mktemp("qwen3tts_voices")
    return cloning_setup(root, tiny_tts_base_bundle, RATE, tiny_tts_custom_bundle)


@pytest.fixture(scope="module")
def daemon(setup) -> Iterator[Daemon]:
    base, root, sections = setup
    with serving(root / "first", base, **sections) as d:
        yield d


def speak(d: Daemon, voice: str, seed: int = 7, language: str = "english") -> bytes:
    return (
        sdk(d, timeout=SDK_TIMEOUT_S)
        .audio.speech.create(
            model="tts-1",
            voice=voice,
            input=TEXT,
            response_format="wav",
            extra_body={"language": language, "seed": seed, "stream": False},
        )
        .read()
    )


def test_clone_speak_restart_remove(daemon: Daemon, setup):
    base, root, sections = setup
    store = root / "store"
    with daemon.http_client(timeout=120) as c:
        # A CustomVoice speaker does not clone: the base bundle does.
        refused = c.post(
            "/v1/voices",
            data={"name": "bob", "model": "serena"},
            files={"file": ("ref.wav", clip(), "audio/wav")},
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "cloning_unavailable"
        r = c.post(
            "/v1/voices",
            data={"name": "anna"},
            files={"file": ("ref.wav", clip(), "audio/wav")},
        )
    assert r.status_code == 201, r.text
    voice = r.json()
    assert (voice["engine"], voice["base"]) == ("qwen3-tts", base.name)
    assert "en" in voice["languages"]
    assert [p.name for p in store.iterdir()] == ["anna.voice"]

    wav = speak(daemon, "anna")
    audio, rate = sf.read(io.BytesIO(wav), dtype="float32")
    assert rate == RATE and len(audio) > 0 and np.abs(audio).max() > 1e-3
    assert speak(daemon, "anna") == wav  # the same seed, the same bytes
    assert speak(daemon, base.name) != wav  # the x-vector row made the difference
    assert speak(daemon, "anna", language="chinese") != wav  # and the language row
    with pytest.raises(openai.BadRequestError, match="language: expected one of"):
        speak(daemon, "anna", language="klingon")
    (tts,) = info(daemon).tts
    wy = {v.name: v for v in tts.voices}
    assert "anna" in wy and "en" in wy["anna"].languages
    # Each bundle voice says how close its streamed audio is to upstream's.
    with daemon.http_client() as c:
        listed = {v["name"]: v for v in c.get("/v1/audio/voices").json()["voices"]}
    assert "dB SNR from upstream's decode" in listed[base.name]["description"]

    # Restarted: the stored print speaks exactly as before.
    assert daemon.stop() == 0, daemon.stderr()
    with serving(root / "second", base, **sections) as again:
        assert speak(again, "anna") == wav
        with again.http_client() as c:
            assert c.delete("/v1/voices/anna").status_code == 200
            names = [v["name"] for v in c.get("/v1/audio/voices").json()["voices"]]
        assert "anna" not in names and base.name in names
        assert list(store.iterdir()) == []
