"""GPT-SoVITS zero-shot voices behind the service, end to end: the tiny test
voice built with the four reference graphs (``gsv_clone_voice``, the real
scripts/build-gptsovits ``--hubert --sv``) served on the CPU backend; a voice registered
over HTTP (multipart, as the ``hexvoice voice add`` CLI sends it) from a clip
the test voice itself spoke, its prompt tokens, ``ge`` and sv embedding
computed by the reference graphs on the NPU worker; spoken twice with the same
seed, listed by Wyoming ``info`` and ``/v1/audio/voices``, kept across a
restart bit for bit, removed; and every bad registration refused with nothing
left behind."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import soundfile as sf

from tests.daemon.conftest import Daemon, ServiceVoice
from tests.daemon.voice_clients import (
    cloning_setup,
    info,
    serving,
    stored,
    wav_bytes,
)

RATE = 32000
ENGINE = "gpt-sovits-v2pro"
#: what the test voice says for the clip, and the clip's transcript
SPOKEN, TRANSCRIPT = "你好。你好。", "你好。"
#: the clip registered: the test voice's own audio cut to this long (3..10 s,
#: and short enough that its prompt leaves the tiny prefill room for text)
CLIP_SECONDS = 3.2
TEXT = "我们走吧。"


@pytest.fixture(scope="module")
def setup(tmp_path_factory, gsv_clone_voice: Path) -> tuple[ServiceVoice, Path, dict]:
    root = tmp_path_factory.mktemp("gsv_voices")
    return cloning_setup(root, gsv_clone_voice / "bundle", RATE)


@pytest.fixture(scope="module")
def daemon(setup) -> Iterator[Daemon]:
    base, root, sections = setup
    with serving(root / "first", base, **sections) as d:
        yield d


def speak(d: Daemon, voice: str, text: str = TEXT, seed: int = 7) -> bytes:
    body = {"model": "tts-1", "voice": voice, "input": text,
            "response_format": "wav", "seed": seed, "stream": False}  # fmt: skip
    with d.http_client(timeout=300) as c:
        r = c.post("/v1/audio/speech", json=body)
    assert r.status_code == 200, r.text
    return r.content


@pytest.fixture(scope="module")
def clips(daemon: Daemon, setup) -> dict[str, bytes]:
    """Clips the test voice spoke (two seeds), cut to CLIP_SECONDS."""
    base = setup[0]
    out = {}
    for name, seed in (("main", 3), ("aux", 4)):
        audio, rate = sf.read(io.BytesIO(speak(daemon, base.name, SPOKEN, seed)))
        assert rate == RATE and len(audio) >= CLIP_SECONDS * RATE, len(audio) / rate
        cut = audio[: round(CLIP_SECONDS * RATE)].astype(np.float32)
        out[name] = wav_bytes(cut, RATE)
    return out


def register(
    d: Daemon, name: str, clip: bytes, aux: list[bytes] = (), **fields: str
) -> httpx.Response:
    files = [("file", ("ref.wav", clip, "audio/wav"))]
    files += [("aux", (f"aux{i}.wav", a, "audio/wav")) for i, a in enumerate(aux)]
    form = {"name": name, "transcript": TRANSCRIPT, **fields}
    form = {k: v for k, v in form.items() if v}  # "" leaves the field out
    with d.http_client(timeout=300) as c:
        return c.post("/v1/voices", data=form, files=files)


def audio_voices(d: Daemon) -> list[dict[str, Any]]:
    with d.http_client() as c:
        return c.get("/v1/audio/voices").json()["voices"]


def _seconds(clip: bytes, seconds: float) -> bytes:
    audio, rate = sf.read(io.BytesIO(clip), dtype="float32")
    reps = int(np.ceil(seconds * rate / len(audio)))
    return wav_bytes(np.tile(audio, reps)[: round(seconds * rate)], rate)


BAD = {
    "too short": (lambda c: _seconds(c, 2.0), {}, 400, "file", "at least 3 s"),
    # the tiny bundle's windows hold 4 s (ReferenceParams.max_seconds)
    "too long": (lambda c: _seconds(c, 4.5), {}, 400, "file", "at most 4 s"),
    "silent": (lambda c: wav_bytes(np.zeros(4 * RATE, np.float32), RATE), {},
               400, "file", "silence"),
    "not audio": (lambda c: b"not audio at all", {}, 400, "file", "bytes"),
    "200 MB": (lambda c: b"RIFF" + bytes(200 * 1024 * 1024), {}, 413, None,
               "expected at most"),
    "name ../x": (lambda c: c, {"name": "../x"}, 400, "name", "expected a name"),
    "no transcript": (lambda c: c, {"transcript": ""}, 400, "transcript",
                      "the clip's transcript"),
    "wrong language": (lambda c: c, {"language": "en"}, 400, None, "no en text"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_registrations_are_refused_and_leave_nothing(daemon, setup, clips, case):
    make, fields, status, param, words = BAD[case]
    store = setup[1] / "store"
    before = stored(store)
    name = fields.get("name", "carol")
    rest = {k: v for k, v in fields.items() if k != "name"}
    r = register(daemon, name, make(clips["main"]), **rest)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert words in error["message"], error
    if param is not None:
        assert error["param"] == param, error
    assert stored(store) == before
    assert name not in {v["name"] for v in audio_voices(daemon)}


def test_zero_shot_register_speak_restart_remove(daemon: Daemon, setup, clips):
    base, root, sections = setup
    store = root / "store"
    r = register(daemon, "anna", clips["main"], language="zh")
    assert r.status_code == 201, r.text
    voice = r.json()
    assert (voice["engine"], voice["base"]) == (ENGINE, base.name)
    assert voice["transcript"] == TRANSCRIPT and "zh" in voice["languages"]
    assert stored(store) == ["anna.voice"]

    spoken = speak(daemon, "anna")
    audio, rate = sf.read(io.BytesIO(spoken), dtype="float32")
    assert rate == RATE and len(audio) > 0 and np.abs(audio).max() > 1e-3
    assert speak(daemon, "anna") == spoken  # the same seed, the same bytes
    assert speak(daemon, base.name) != spoken  # the clip's prompt and style did it
    (tts,) = info(daemon).tts
    assert "anna" in {v.name for v in tts.voices}
    listed = {v["name"]: v for v in audio_voices(daemon)}
    assert listed["anna"]["cloned"] is True

    # Aux clips: ge averaged over both clips, another voice than anna.
    r = register(daemon, "bella", clips["main"], [clips["aux"]])
    assert r.status_code == 201, r.text
    assert speak(daemon, "bella") not in (spoken, speak(daemon, base.name))

    # Restarted: the stored prints speak exactly as before.
    assert daemon.stop() == 0, daemon.stderr()
    with serving(root / "second", base, **sections) as again:
        assert speak(again, "anna") == spoken
        with again.http_client() as c:
            assert c.delete("/v1/voices/anna").status_code == 200
            assert c.delete("/v1/voices/bella").status_code == 200
        names = [v["name"] for v in audio_voices(again)]
        assert "anna" not in names and base.name in names
        assert stored(store) == []
