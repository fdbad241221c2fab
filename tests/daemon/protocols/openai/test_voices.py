"""``/v1/voices`` on a real service: register a cloned voice from a clip (the
tone engine's ``clone`` on the NPU worker), speak with it over both protocols,
keep it across restarts, refuse every bad registration, remove it."""

from __future__ import annotations

import asyncio
import io
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import numpy as np
import openai
import pytest
import soundfile as sf
import yaml

from daemon.service.cloning import voicefile
from tests.daemon.conftest import Daemon, ServiceVoice, copy_voice, start_daemon
from tests.daemon.tone_engine import ENGINE_ID
from tests.daemon.voice_clients import info, sdk, serving, stored

RATE = 16000
#: The cloning tone voice's clip bounds (params.cloning).
MIN_S, MAX_S = 0.5, 4.0
CLIP_HZ = 440.0


def clip(hz: float = CLIP_HZ, seconds: float = 1.5, fmt: str = "WAV", **kw) -> bytes:
    t = np.arange(round(seconds * RATE)) / RATE
    pcm = (0.4 * np.sin(2 * np.pi * hz * t)).astype(np.float32)
    buf = io.BytesIO()
    sf.write(buf, kw.get("pcm", pcm), RATE, format=fmt, subtype=kw.get("sub", "PCM_16"))
    return buf.getvalue()


def pitch(audio: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(audio))
    return float(np.fft.rfftfreq(len(audio), 1.0 / rate)[np.argmax(spectrum)])


@pytest.fixture(scope="module")
def voices(test_voice: ServiceVoice, tmp_path_factory) -> dict[str, Any]:
    """A plain tone voice, two cloning ones, and a store directory."""
    root = tmp_path_factory.mktemp("clone_voices")
    spec = {"min_seconds": MIN_S, "max_seconds": MAX_S}
    cloner = copy_voice(test_voice, root / "cloner", "cloner", cloning=spec)
    # As GPT-SoVITS zero-shot will: the clip's transcript is part of the voice.
    scribe = {**spec, "transcript": "required", "max_aux": 2}
    scribe_voice = copy_voice(test_voice, root / "scribe", "scribe", cloning=scribe)
    return {
        "sections": {
            "voices": [
                {"bundle": str(test_voice.bundle)},
                {"bundle": str(cloner.bundle)},
                {"bundle": str(scribe_voice.bundle)},
            ],
            "voice_store": {"dir": str(root / "store"), "max_count": 3},
            # onnxruntime CPU: these tests are about the service, not the graphs
            "engine": {"backend": "cpu"},
        },
        "store": root / "store",
        "cloner": cloner,
        "root": root,
    }


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice, voices) -> Iterator[Daemon]:
    tmp = tmp_path_factory.mktemp("v")
    with serving(tmp, test_voice, **voices["sections"]) as d:
        yield d


def add(
    d: Daemon, name: str, data: bytes | None = None, **fields: str
) -> httpx.Response:
    files = {"file": ("ref.wav", clip() if data is None else data, "audio/wav")}
    with d.http_client() as c:
        return c.post("/v1/voices", data={"name": name, **fields}, files=files)


def say(d: Daemon, voice: str) -> tuple[np.ndarray, int]:
    data = (
        sdk(d)
        .audio.speech.create(
            model="tts-1", voice=voice, input="one two three", response_format="wav"
        )
        .read()
    )
    audio, rate = sf.read(io.BytesIO(data), dtype="float32")
    return audio, rate


def test_a_cloned_voice_is_a_voice_like_any_other(daemon: Daemon, voices):
    r = add(daemon, "anna", transcript="a tone at four forty")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["name"] == "anna" and body["engine"] == ENGINE_ID
    assert body["base"] == "cloner" and body["available"] is True
    assert (
        body["languages"] == ["en_US"] and body["transcript"] == "a tone at four forty"
    )
    assert stored(voices["store"]) == ["anna.voice"]

    with daemon.http_client() as c:
        listed = c.get("/v1/voices").json()["data"]
        audio_voices = c.get("/v1/audio/voices").json()["voices"]
    assert [v["name"] for v in listed] == ["anna"]
    by_id = {v["id"]: v for v in audio_voices}
    assert by_id["anna"]["cloned"] is True and by_id["cloner"]["cloned"] is False
    (tts,) = info(daemon).tts
    wy = {v.name: v for v in tts.voices}
    assert wy["anna"].languages == ["en_US"] and wy["anna"].speakers is None
    assert "cloned" in (wy["anna"].description or "")

    # Spoken at the clip's pitch (the print), unlike its base voice.
    audio, rate = say(daemon, "anna")
    assert pitch(audio, rate) == pytest.approx(CLIP_HZ, abs=10)
    base, _ = say(daemon, "cloner")
    assert abs(pitch(base, rate) - CLIP_HZ) > 20
    assert len(audio) == len(base)  # the same words, the same rhythm


def test_wyoming_speaks_the_cloned_voice(daemon: Daemon):
    assert add(daemon, "wyo", clip(hz=300.0)).status_code == 201
    from daemon.cli.wyoming_client import synthesize

    speech = asyncio.run(synthesize(daemon.uri, "one two", voice="wyo"))
    pcm = np.frombuffer(speech.pcm, "<i2").astype(np.float32)
    assert pitch(pcm, speech.rate) == pytest.approx(300.0, abs=10)
    # A speaker: a cloned voice has none (the one check, before queueing).
    with pytest.raises(Exception, match="unknown_speaker"):
        asyncio.run(synthesize(daemon.uri, "one", voice="wyo", speaker="1"))
    with daemon.http_client() as c:
        assert c.delete("/v1/voices/wyo").json() == {
            "id": "wyo", "object": "voice", "deleted": True,
        }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "data", "fields", "status", "param", "code", "words"),
    [
        ("../x", None, {}, 400, "name", "invalid_voice_name", "letters, digits"),
        (".x", None, {}, 400, "name", "invalid_voice_name", "found '.x'"),
        ("alloy", None, {}, 400, "name", "invalid_voice_name", "not an OpenAI voice"),
        ("tone", None, {}, 409, "name", "voice_exists", "a loaded voice is named"),
        ("b", None, {"model": "tone"}, 400, "model", "cloning_unavailable", "cloner"),
        (
            "b",
            None,
            {"model": "scribe"},
            400,
            "transcript",
            "missing_required_parameter",
            "the clip's transcript",
        ),
        (
            "b",
            None,
            {"model": "scribe", "transcript": " "},
            400,
            "transcript",
            "missing_required_parameter",
            "the clip's transcript",
        ),
        ("b", clip(seconds=0.2), {}, 400, "file", "invalid_value", "at least 0.5 s"),
        ("b", clip(seconds=6), {}, 400, "file", "invalid_value", "at most 4 s"),
        ("b", b"not audio at all", {}, 400, "file", "unsupported_format", "bytes"),
        ("b", clip(pcm=np.zeros(RATE)), {}, 400, "file", "invalid_audio", "silence"),
        ("b", clip(fmt="FLAC")[:-300], {}, 400, "file", "invalid_audio", "breaks off"),
    ],
)
def test_bad_registrations_are_refused_and_leave_nothing(
    daemon: Daemon, voices, name, data, fields, status, param, code, words
):
    before = stored(voices["store"])
    r = add(daemon, name, data, **fields)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert (error["param"], error["code"]) == (param, code), error
    assert words in error["message"], error
    if status == 409:
        assert r.headers["x-should-retry"] == "false"
    assert stored(voices["store"]) == before
    assert name not in {v["name"] for v in daemon_voices(daemon) if v["cloned"]}


def daemon_voices(d: Daemon) -> list[dict[str, Any]]:
    with d.http_client() as c:
        return c.get("/v1/audio/voices").json()["voices"]


def test_an_upload_past_25_mb_is_refused_at_once(daemon: Daemon, voices):
    big = b"RIFF" + bytes(26 * 1024 * 1024)
    r = add(daemon, "huge", big)
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "payload_too_large"
    assert "huge.voice" not in stored(voices["store"])


def test_an_engine_that_needs_the_transcript_gets_it(daemon: Daemon):
    r = add(daemon, "said", model="scribe", transcript=" one two three ")
    assert r.status_code == 201, r.text
    assert (r.json()["base"], r.json()["transcript"]) == ("scribe", "one two three")
    with daemon.http_client() as c:
        assert c.delete("/v1/voices/said").status_code == 200


def test_the_clips_language_and_aux_clips_reach_the_engine(daemon: Daemon, voices):
    def post(name: str, aux: list[bytes], **fields: str) -> httpx.Response:
        files = [("file", ("ref.wav", clip(), "audio/wav"))]
        files += [("aux", (f"aux{i}.wav", a, "audio/wav")) for i, a in enumerate(aux)]
        form = {"name": name, "model": "scribe", "transcript": "one", **fields}
        with daemon.http_client() as c:
            return c.post("/v1/voices", data=form, files=files)

    before = stored(voices["store"])
    refused = [
        (post("x1", [clip()] * 3), "aux", "at most 2 aux clip(s)"),
        (post("x2", [clip(seconds=0.1)]), "aux[0]", "at least 0.5 s"),
        (post("x3", [clip(), b"not audio"]), "aux[1]", "bytes"),
        (post("x4", [], language="klingon"), "language", "expected one of"),
    ]
    for r, param, words in refused:
        assert r.status_code == 400, r.text
        assert r.json()["error"]["param"] == param, r.text
        assert words in r.json()["error"]["message"], r.text
    assert stored(voices["store"]) == before
    r = post("multi", [clip(hz=500), clip(hz=600)], language="en")
    assert r.status_code == 201, r.text
    kept = voicefile.decode((voices["store"] / "multi.voice").read_bytes(), "multi")
    assert (kept.print.meta["language"], kept.print.meta["aux"]) == ("en", 2)
    with daemon.http_client() as c:
        assert c.delete("/v1/voices/multi").status_code == 200
    # A voice that takes no aux clips refuses them before any is decoded.
    files = [("file", ("r.wav", clip(), "audio/wav")), ("aux", ("a.wav", b"x"))]
    with daemon.http_client() as c:
        r = c.post("/v1/voices", data={"name": "y", "model": "cloner"}, files=files)
    assert r.status_code == 400 and r.json()["error"]["param"] == "aux", r.text


def test_duplicates_missing_fields_unknown_and_engine_voices(daemon: Daemon):
    assert add(daemon, "dup").status_code == 201
    again = add(daemon, "dup", clip(hz=500))
    assert again.status_code == 409 and again.json()["error"]["code"] == "voice_exists"
    with daemon.http_client() as c:
        no_file = c.post("/v1/voices", data={"name": "nofile"}, files={"x": b"1"})
        no_name = c.post("/v1/voices", files={"file": clip()})
        gone = c.delete("/v1/voices/nobody")
        engine = c.delete("/v1/voices/tone")
        assert c.delete("/v1/voices/dup").status_code == 200
    assert no_file.status_code == 400 and no_file.json()["error"]["param"] == "file"
    assert no_name.status_code == 400 and no_name.json()["error"]["param"] == "name"
    assert gone.status_code == 404, gone.text
    assert gone.json()["error"]["code"] == "voice_not_found"
    assert engine.status_code == 400, engine.text
    assert engine.json()["error"]["code"] == "not_a_cloned_voice"
    # The SDK's own error classes, from the envelope.
    with pytest.raises(openai.NotFoundError):
        sdk(daemon).delete("/voices/nobody", cast_to=httpx.Response)


def test_the_store_is_capped(daemon: Daemon, voices):
    have = [v["name"] for v in daemon_voices(daemon) if v["cloned"]]
    names = [f"cap{i}" for i in range(3 - len(have))]
    for n in names:
        assert add(daemon, n).status_code == 201
    full = add(daemon, "one-more")
    assert full.status_code == 409, full.text
    assert full.json()["error"]["code"] == "voice_store_full"
    assert "max_count is 3" in full.json()["error"]["message"]
    with daemon.http_client() as c:
        for n in names:
            assert c.delete(f"/v1/voices/{n}").status_code == 200
    assert "one-more.voice" not in stored(voices["store"])


def test_a_registration_is_a_queued_cancellable_job(tmp_path, test_voice):
    """A slow clone runs on the worker like any request: one more waits behind
    it, a third finds the queue full (429), and a client that hangs up cancels
    its registration within a graph call, leaving nothing stored."""
    slow = copy_voice(
        test_voice, tmp_path / "slow", "slow",
        cloning={"min_seconds": MIN_S, "max_seconds": MAX_S, "calls_per_block": 6000},
    )  # fmt: skip
    store = tmp_path / "store"
    d = start_daemon(
        tmp_path / "d",
        slow,
        voice_store={"dir": str(store)},
        limits={"queue_size": 1},
        engine={"backend": "cpu"},
    )
    try:
        left = _raw_post(d, "left")
        assert _eventually(lambda: d.metrics()["hexvoice_worker_busy"] == 1)
        queued = threading.Thread(target=add, args=(d, "queued"))
        queued.start()
        assert _eventually(lambda: d.metrics()["hexvoice_queue_depth"] == 2)
        busy = add(d, "third")
        assert busy.status_code == 429, busy.text
        assert int(busy.headers["Retry-After"]) >= 1
        left.close()  # hangs up while its clone runs
        queued.join(60)
        m = d.metrics()
        assert m['hexvoice_requests_total{outcome="cancelled",protocol="http"}'] == 1
        # It stopped soon after the hang-up, not after its 36,000 calls.  (The
        # gauge is read once the loop settles the job, so it also counts the
        # first calls of the queued one, which the freed worker starts at once.)
        assert m["hexvoice_last_cancel_graph_calls"] < 1000
        assert stored(store) == ["queued.voice"]
    finally:
        assert d.stop() == 0, d.stderr()
    assert "Traceback" not in d.stderr(), d.stderr()


def _raw_post(d: Daemon, name: str) -> socket.socket:
    """A registration sent on a raw socket, to hang up on at will."""
    req = httpx.Request(
        "POST", "http://hexvoice/v1/voices", data={"name": name},
        files={"file": ("ref.wav", clip(), "audio/wav")},
    )  # fmt: skip
    head = "POST /v1/voices HTTP/1.1\r\nHost: hexvoice\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in req.headers.items() if k.lower() != "host"
    )
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(d.http))
    s.sendall(head.encode() + b"\r\n" + req.read())
    return s


def _eventually(check, timeout: float = 20.0) -> bool:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def test_voices_survive_restarts_and_follow_their_bundle(tmp_path, test_voice, voices):
    store = tmp_path / "store"
    sections = {**voices["sections"], "voice_store": {"dir": str(store)}}
    d = start_daemon(tmp_path / "a", test_voice, **sections)
    try:
        assert add(d, "kept", clip(hz=600)).status_code == 201
    finally:
        assert d.stop() == 0, d.stderr()

    # A stored voice named like a bundle's voice (written while the service was
    # down): the bundle's voice wins, the stored one waits, and the log says so.
    kept = voicefile.decode((store / "kept.voice").read_bytes(), "kept")
    (store / "tone.voice").write_bytes(voicefile.encode(replace(kept, name="tone")))

    # Restarted: still there, and speaking.
    d = start_daemon(tmp_path / "b", test_voice, **sections)
    try:
        audio, rate = say(d, "kept")
        assert pitch(audio, rate) == pytest.approx(600, abs=10)
        log = d.stderr()
        assert "voice store" in log and "2 cloned voice(s)" in log
        # Not even while its bundle was still loading (after the other one).
        assert "cloned voice 'kept' is not offered" not in log
        shadow = "cloned voice 'tone' is not offered: a loaded bundle offers a voice"
        assert log.count(shadow) == 1, log
        base, _ = say(d, "tone")
        assert abs(pitch(base, rate) - 600) > 20  # the bundle's own voice spoke
        with d.http_client() as c:
            listed = {v["name"]: v for v in c.get("/v1/voices").json()["data"]}
            assert listed["tone"]["available"] is False
            assert c.delete("/v1/voices/tone").status_code == 200
    finally:
        assert d.stop() == 0, d.stderr()

    # The bundle rebuilt with another encoder: stored, not offered, and why.
    manifest = voices["cloner"].bundle / "voice.yaml"
    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(voices["cloner"].bundle, rebuilt)
    m = yaml.safe_load(manifest.read_text())
    m["params"]["cloning"]["model"] = "another-encoder"
    (rebuilt / "voice.yaml").write_text(yaml.safe_dump(m))
    changed = {
        **sections,
        "voices": [{"bundle": str(test_voice.bundle)}, {"bundle": str(rebuilt)}],
    }
    d = start_daemon(tmp_path / "c", test_voice, **changed)
    try:
        assert "kept" not in {v["name"] for v in daemon_voices(d)}
        with d.http_client() as c:
            (entry,) = c.get("/v1/voices").json()["data"]
            refused = c.post("/v1/audio/speech", json={
                "model": "tts-1", "voice": "kept", "input": "hi"})  # fmt: skip
        assert entry["available"] is False and "another-enco" in entry["reason"]
        # Refused as the stored voice's state, with the fix (not a bad request).
        assert refused.status_code == 409, refused.text
        error = refused.json()["error"]
        assert (error["code"], error["param"]) == ("voice_unusable", "voice"), error
        assert "'kept' does not fit the loaded bundles" in error["message"], error
        assert "register it again" in error["message"], error
        said = "cloned voice 'kept' is not offered: cloner: made with model"
        assert d.stderr().count(said) == 1, d.stderr()
        # Removing it works while it is not offered.
        with d.http_client() as c:
            assert c.delete("/v1/voices/kept").status_code == 200
    finally:
        assert d.stop() == 0, d.stderr()
    assert stored(store) == []
