"""IndexTTS-2 behind ``hexvoice serve`` (the tiny bundle, onnxruntime CPU,
its licence accepted in the config), with real clients: a voice registered
over HTTP (multipart, as ``hexvoice voice add`` sends it) needs the caller's
consent (400 and nothing stored without it); it is listed in
``/v1/audio/voices``' cloned voices and Wyoming ``info``; it speaks over HTTP
(the ``openai`` SDK, WAV and its emotion fields) and Wyoming ``synthesize``
the bytes the engine speaks in-process for the same seed (whose own audio is
upstream's ``infer``'s: tests/engine); a bad emotion value is a 400 naming
the field; without the licence the service refuses to start, exit 78."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import soundfile as sf
import yaml
from daemon.sdk.audio.shaping import to_int16
from daemon.sdk.tts import SynthesisOptions

from hexvoice_indextts.engine.params import LICENSE
from hexvoice_indextts.oracle.run import TEXT, TINY_MEL_TOKENS

openai = pytest.importorskip("openai")
httpx = pytest.importorskip("httpx2")

SEED: Final = 7
NAME: Final = "anna"
READY_S: Final = 180.0
EMOTION: Final = [0.5, 0, 0, 0, 0, 0, 0, 0.25]
ROOT: Final = Path(__file__).resolve().parents[4]


def _config(tmp: Path, bundle: Path, accept: bool) -> Path:
    cfg = {
        "voices": [{"bundle": str(bundle)}],
        "listen": {"wyoming": str(tmp / "w.sock"), "http": str(tmp / "h.sock")},
        "engine": {"backend": "cpu"},
        "voice_store": {"dir": str(tmp / "store")},
        "accept_licenses": [LICENSE.id] if accept else [],
    }
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _serve(config: Path, log: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "daemon.cli", "serve", "--config", str(config)]
    return subprocess.Popen(argv, cwd=ROOT, env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=open(log, "wb"))  # noqa: SIM115  # fmt: skip


def _client(sock: Path) -> Any:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)),
                        base_url="http://hexvoice", timeout=120)  # fmt: skip


@pytest.fixture(scope="module")
def service(bundle: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = Path(os.path.realpath(tmp_path_factory.mktemp("svc")))
    log = tmp / "daemon.log"
    proc = _serve(_config(tmp, bundle.bundle.root, True), log)
    deadline = time.monotonic() + READY_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"the service exited {proc.returncode}:\n{log.read_text()}")
        try:
            with _client(tmp / "h.sock") as c:
                if c.get("/health").status_code == 200:
                    break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the service did not get ready:\n{log.read_text()}")
        time.sleep(0.5)
    yield tmp
    proc.terminate()
    assert proc.wait(60) == 0, log.read_text()
    assert "Traceback" not in log.read_text(), log.read_text()


def _wav(clip: Path) -> bytes:
    return clip.read_bytes()


def test_registering_needs_consent_then_lists_the_voice(
    service: Path, clip: Path
) -> None:
    with _client(service / "h.sock") as c:
        files = {"file": ("clip.wav", _wav(clip), "audio/wav")}
        refused = c.post("/v1/voices", data={"name": NAME}, files=files)
        assert refused.status_code == 400, refused.text
        assert "consent" in refused.json()["error"]["message"]
        store = service / "store"
        assert not store.exists() or not any(store.iterdir())
        data = {"name": NAME, "consent": "The speaker agreed to this clone."}
        made = c.post("/v1/voices", data=data, files=files)
        assert made.status_code == 201, made.text
        listed = {v["id"]: v for v in c.get("/v1/voices").json()["data"]}
        assert listed[NAME]["available"] and "agreed" in listed[NAME]["consent"]
        voices = c.get("/v1/audio/voices").text
        assert NAME in voices


def _engine_pcm(engine: Any, text: str, voice: Any, **extra: Any) -> bytes:
    opts = SynthesisOptions(voice_print=voice, seed=SEED, extra=extra)
    return b"".join(to_int16(ch.audio) for ch in engine.synthesize(text, opts))


@pytest.fixture(scope="module")
def voice_print(engine: Any, clip: Path) -> Any:
    audio, rate = sf.read(clip, dtype="float32")
    return engine.clone(audio, rate)


def test_http_speaks_the_engines_bytes(
    service: Path, engine: Any, voice_print: Any, clip: Path
) -> None:
    http = openai.DefaultHttpxClient(
        transport=httpx.HTTPTransport(uds=str(service / "h.sock"))
    )
    client = openai.OpenAI(base_url="http://localhost/v1", api_key="x", max_retries=0,
                           http_client=http)  # fmt: skip
    for extra in ({}, {"emo_vector": EMOTION, "emo_alpha": 0.8}):
        body = {"seed": SEED, "max_mel_tokens": TINY_MEL_TOKENS, **extra}
        got = client.audio.speech.create(
            model="tts-1",
            voice=NAME,
            input=TEXT,
            response_format="wav",
            extra_body=body,
        )
        pcm, rate = sf.read(io.BytesIO(got.content), dtype="int16")
        want = _engine_pcm(
            engine, TEXT, voice_print, max_mel_tokens=TINY_MEL_TOKENS, **extra
        )
        assert rate == 22050 and pcm.tobytes() == want
    with pytest.raises(openai.BadRequestError) as bad:
        client.audio.speech.create(model="tts-1", voice=NAME, input=TEXT,
                                   extra_body={"emo_alpha": 3})  # fmt: skip
    assert "emo_alpha" in str(bad.value)


def test_wyoming_speaks_the_engines_bytes(
    service: Path, engine: Any, voice_print: Any
) -> None:
    from wyoming.audio import AudioChunk, AudioStop
    from wyoming.client import AsyncClient
    from wyoming.event import Event
    from wyoming.info import Describe, Info

    async def talk() -> tuple[bytes, Any]:
        async with AsyncClient.from_uri(f"unix://{service / 'w.sock'}") as c:
            await c.write_event(Describe().event())
            info = Info.from_event(await c.read_event())
            data = {"text": TEXT, "voice": {"name": NAME}, "seed": SEED}
            await c.write_event(Event("synthesize", data))
            audio = b""
            while True:
                ev = await asyncio.wait_for(c.read_event(), 120)
                if AudioChunk.is_type(ev.type):
                    audio += AudioChunk.from_event(ev).audio
                elif AudioStop.is_type(ev.type):
                    return audio, info

    audio, info = asyncio.run(talk())
    names = [v.name for p in info.tts for v in p.voices]
    assert NAME in names
    # no max_mel_tokens over Wyoming: the segment runs to the graphs' room
    assert audio == _engine_pcm(engine, TEXT, voice_print)


def test_without_the_licence_the_service_refuses_to_start(
    bundle: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = Path(os.path.realpath(tmp_path_factory.mktemp("nolic")))
    log = tmp / "daemon.log"
    proc = _serve(_config(tmp, bundle.bundle.root, False), log)
    assert proc.wait(120) == 78, log.read_text()
    assert "--accept-license bilibili-model-use" in log.read_text()
