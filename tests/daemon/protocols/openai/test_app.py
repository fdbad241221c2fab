"""OpenAI-compatible HTTP over a Unix socket: the official SDK, curl and httpx."""

from __future__ import annotations

import base64
import io
import json
import shutil
import struct
import subprocess
import time
import wave
from pathlib import Path

import numpy as np
import openai
import pytest
import soundfile as sf

from tests.daemon import voice_clients
from tests.daemon.conftest import Daemon, words

needs_curl = pytest.mark.skipif(
    shutil.which("curl") is None, reason="curl not installed (apt-get install curl)"
)


@pytest.fixture(scope="module")
def daemon(daemon_factory) -> Daemon:
    return daemon_factory("http")


@pytest.fixture(scope="module")
def sdk(daemon: Daemon) -> openai.OpenAI:
    return voice_clients.sdk(daemon)


def _wav(data: bytes) -> tuple[np.ndarray, int]:
    """Parse a streamed WAV (sizes 0xFFFFFFFF): header fields + all PCM after it."""
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
        rate = w.getframerate()
    pcm = np.frombuffer(data[44:], "<i2")
    return pcm, rate


def test_sdk_speech_wav(sdk: openai.OpenAI, test_voice):
    resp = sdk.audio.speech.create(
        model="tts-1",
        voice=test_voice.name,
        input="hello from the sdk",
        response_format="wav",
    )
    data = resp.read()
    assert data[:4] == b"RIFF" and data[4:8] == b"\xff\xff\xff\xff"
    pcm, rate = _wav(data)
    assert rate == test_voice.sample_rate
    assert len(pcm) == pytest.approx(4 * 0.12 * rate, rel=0.01)
    assert np.abs(pcm).max() > 5000


def test_sdk_pcm_is_24k(sdk: openai.OpenAI, test_voice):
    text = "pcm at twenty four kilohertz"
    pcm = np.frombuffer(
        sdk.audio.speech.create(
            model="tts-1", voice=test_voice.name, input=text, response_format="pcm"
        ).read(),
        "<i2",
    )
    seconds = len(text.split()) * 0.12
    assert len(pcm) == pytest.approx(seconds * 24000, rel=0.02)


def test_sdk_streams_first_bytes_early(sdk: openai.OpenAI, test_voice):
    t0 = time.monotonic()
    first = None
    n = 0
    with sdk.audio.speech.with_streaming_response.create(
        model="tts-1",
        voice=test_voice.name,
        input=words(500, "w"),
        response_format="pcm",
    ) as r:
        for chunk in r.iter_bytes(4096):
            if first is None:
                first = time.monotonic() - t0
            n += len(chunk)
    total = time.monotonic() - t0
    assert n > 0 and first is not None
    assert first < 0.25 * total, (first, total)


def test_openai_voice_name_selects_the_default_voice(sdk: openai.OpenAI):
    data = sdk.audio.speech.create(
        model="tts-1-hd", voice="alloy", input="stock client", response_format="wav"
    ).read()
    assert len(_wav(data)[0]) > 0


@pytest.mark.parametrize("fmt", ["flac", "mp3", "opus"])
def test_compressed_formats_decode(sdk: openai.OpenAI, test_voice, fmt):
    resp = sdk.audio.speech.with_raw_response.create(
        model="tts-1",
        voice=test_voice.name,
        input="compressed audio test",
        response_format=fmt,
    )
    # Encoded once synthesis is over (their headers carry the length), and said so.
    assert resp.headers["x-hexvoice-streaming"] == "after-synthesis"
    data = resp.content
    audio, rate = sf.read(io.BytesIO(data))
    assert rate in (test_voice.sample_rate, 24000)
    assert len(audio) / rate == pytest.approx(3 * 0.12, abs=0.08)


def test_wav_not_streamed_carries_its_real_sizes(sdk: openai.OpenAI, test_voice):
    args = {
        "model": "tts-1",
        "voice": test_voice.name,
        "input": "the sizes are known",
        "response_format": "wav",
    }
    streamed = sdk.audio.speech.with_raw_response.create(**args)
    assert streamed.headers["x-hexvoice-streaming"] == "during-synthesis"
    assert streamed.content[4:8] == streamed.content[40:44] == b"\xff\xff\xff\xff"
    whole = sdk.audio.speech.with_raw_response.create(
        **args, extra_body={"stream": False}
    )
    assert whole.headers["x-hexvoice-streaming"] == "after-synthesis"
    data = whole.content
    assert int(whole.headers["content-length"]) == len(data)
    riff, size = struct.unpack("<I", data[4:8])[0], struct.unpack("<I", data[40:44])[0]
    assert (riff, size) == (len(data) - 8, len(data) - 44)
    with wave.open(io.BytesIO(data)) as w:
        assert (
            w.getnframes() == size // 2 and w.getframerate() == test_voice.sample_rate
        )
    assert sf.info(io.BytesIO(data)).frames == size // 2
    assert data[44:] == streamed.content[44:]  # same audio, only the header differs


def _curl_speech(
    daemon: Daemon, body: dict, out: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    """POST /v1/audio/speech with the real curl, as the README shows it."""
    return subprocess.run(
        ["curl", "-sS", "--fail-with-body", *flags, "--unix-socket", str(daemon.http)]
        + ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
        + ["http://localhost/v1/audio/speech", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=30,
    )


@needs_curl
def test_http_1_0_gets_a_whole_wav(daemon: Daemon, test_voice, tmp_path):
    out = tmp_path / "h10.wav"
    body = {
        "model": "m",
        "voice": "tone",
        "input": "old client",
        "response_format": "wav",
    }
    r = _curl_speech(daemon, body, out, "--http1.0")
    assert r.returncode == 0, (r.stderr, out.read_bytes()[:300])
    with wave.open(str(out)) as w:
        assert w.getnframes() == round(2 * 0.12 * test_voice.sample_rate)


def test_sse_deltas_carry_the_pcm(daemon: Daemon, test_voice):
    body = {"model": "tts-1", "voice": test_voice.name, "input": "server sent events"}
    with daemon.http_client() as c:
        plain = c.post(
            "/v1/audio/speech", json={**body, "response_format": "pcm"}
        ).content
        r = c.post(
            "/v1/audio/speech",
            json={**body, "response_format": "pcm", "stream_format": "sse"},
        )
    assert r.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(x[6:]) for x in r.text.split("\n\n") if x.startswith("data: ")]
    assert events[-1]["type"] == "speech.audio.done" and "usage" in events[-1]
    deltas = [e for e in events[:-1] if e["type"] == "speech.audio.delta"]
    assert len(deltas) == len(events) - 1 and len(deltas) > 1
    assert b"".join(base64.b64decode(e["audio"]) for e in deltas) == plain


@pytest.mark.parametrize(
    "kwargs,exc,param,code",
    [
        (
            {"input": "x" * 4097},
            openai.BadRequestError,
            "input",
            "string_above_max_length",
        ),
        ({"input": ""}, openai.BadRequestError, "input", "empty_input"),
        ({"voice": "nobody"}, openai.BadRequestError, "voice", "voice_not_found"),
        (
            {"voice": "../../etc/passwd"},
            openai.BadRequestError,
            "voice",
            "voice_not_found",
        ),
        ({"speed": 10.0}, openai.BadRequestError, "speed", "invalid_value"),
        ({"response_format": "aac"}, openai.BadRequestError, "response_format", None),
    ],
)
def test_sdk_errors_are_openai_shaped(
    sdk: openai.OpenAI, test_voice, kwargs, exc, param, code
):
    args = {
        "model": "tts-1",
        "voice": test_voice.name,
        "input": "hi",
        "response_format": "wav",
    }
    with pytest.raises(exc) as info:
        sdk.audio.speech.create(**{**args, **kwargs}).read()
    err = info.value
    assert err.param == param
    assert code is None or err.code == code
    assert err.message


@pytest.mark.parametrize(
    "body,status,match",
    [
        (
            b'{"model": "tts-1", "input": 5, "voice": "tone"}',
            400,
            "input: expected a string, found 5",
        ),
        (
            b'{"model": 1, "input": "hi", "voice": "tone"}',
            400,
            "model: expected a non-empty string, found 1",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": ["tone"]}',
            400,
            "voice: expected a non-empty string or a mapping, found ['tone']",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": "tone", "speed": "fast"}',
            400,
            "speed: expected an integer or a number, found 'fast'",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": "tone", "speed": true}',
            400,
            "speed: expected an integer or a number, found True",
        ),
        (
            b'{"model": "m", "input": "hi"}',
            400,
            "voice: expected a non-empty string or a mapping, found nothing"
            " (missing field)",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": "tone", "seed": "x"}',
            400,
            "seed: expected an integer or null, found 'x'",
        ),
        (
            b'{"input": "hi", "voice": "tone"}',
            400,
            "model: expected a non-empty string, found nothing (missing field)",
        ),
        (b'["not", "an", "object"]', 400, "JSON object"),
        (b"{not json", 400, "not valid JSON"),
        (
            b'{"model": "", "input": "hi", "voice": "tone"}',
            400,
            "model: expected a non-empty string, found ''",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": {"id": ""}}',
            400,
            "voice.id: expected a non-empty string, found ''",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": "tone", "speed": 1e999}',
            400,
            "not valid JSON: Number out of range",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": "tone", "speed": NaN}',
            400,
            "not valid JSON: JSON is malformed",
        ),
        (b"[" * 100_000, 400, "nested too deeply"),  # RecursionError in json
        (b'{"a":' * 40_000 + b"1" + b"}" * 40_000, 400, "nested too deeply"),
        (b'{"model": "m", "input": "\xff\xfe", "voice": "tone"}', 400, "not UTF-8"),
        (
            json.dumps(
                {"model": "m", "input": "x" * 100_000, "voice": "tone"}
            ).encode(),
            400,
            "input: expected at most 4096 characters, found 100000",
        ),
        (
            b'{"model": "m", "input": "' + b"x" * 300_000 + b'", "voice": "tone"}',
            413,
            "",
        ),
        (
            b'{"model": "m", "input": "hi", "voice": "tone", "stream_format": "x"}',
            400,
            "stream_format: expected one of ['audio', 'sse'], found 'x'",
        ),
    ],
)
def test_bad_requests_get_an_error_envelope(daemon: Daemon, body, status, match):
    with daemon.http_client() as c:
        r = c.post(
            "/v1/audio/speech",
            content=body,
            headers={"Content-Type": "application/json"},
        )
        assert r.status_code == status, r.text
        err = r.json()["error"]
        assert set(err) == {"message", "type", "param", "code"}
        assert match in err["message"]
        assert err["type"] == "invalid_request_error"
        # ... and the next request is served.
        ok = c.post(
            "/v1/audio/speech",
            json={
                "model": "tts-1",
                "input": "next",
                "voice": "tone",
                "response_format": "wav",
            },
        )
        assert ok.status_code == 200


def test_unknown_path_and_method(daemon: Daemon):
    with daemon.http_client() as c:
        r = c.get("/v1/nope")
        assert r.status_code == 404 and "error" in r.json()
        r = c.get("/v1/audio/speech")
        assert r.status_code == 405 and "error" in r.json()


def test_discovery_endpoints(daemon: Daemon, test_voice):
    with daemon.http_client() as c:
        models = c.get("/v1/models").json()
        assert {"tts-1", "tts-1-hd"} <= {m["id"] for m in models["data"]}
        assert {m["id"] for m in c.get("/v1/audio/models").json()["models"]} >= {
            "tts-1"
        }
        voices = c.get("/v1/audio/voices").json()
        assert voices["voices"] == [
            {
                "id": test_voice.name,
                "name": test_voice.name,
                "languages": ["en_US"],
                "cloned": False,
                "description": "test tones",
            }
        ]
        health = c.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"


def test_metrics_are_prometheus_text(daemon: Daemon):
    with daemon.http_client() as c:
        c.post(
            "/v1/audio/speech",
            json={"model": "m", "input": "count me", "voice": "tone"},
        )
        r = c.get("/metrics")
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    m = daemon.metrics()
    assert m['hexvoice_requests_total{outcome="ok",protocol="http"}'] >= 1
    assert m['hexvoice_requests_total{outcome="bad_request",protocol="http"}'] >= 1
    assert m['hexvoice_time_to_first_audio_seconds_count{protocol="http"}'] >= 1
    assert m["hexvoice_rtf_count"] >= 1 and m["hexvoice_audio_seconds_total"] > 0
    assert (
        m["hexvoice_graph_calls_total"] > 0 and m["hexvoice_npu_busy_seconds_total"] > 0
    )
    assert m["hexvoice_queue_depth"] == 0 and m["hexvoice_ready"] == 1


@needs_curl
def test_curl_unix_socket(daemon: Daemon, test_voice, tmp_path):
    out = tmp_path / "s.wav"
    body = {
        "model": "tts-1",
        "input": "curl says hi",
        "voice": test_voice.name,
        "response_format": "wav",
    }
    r = _curl_speech(daemon, body, out)
    assert r.returncode == 0, r.stderr
    pcm, rate = _wav(out.read_bytes())
    assert rate == test_voice.sample_rate and len(pcm) == round(3 * 0.12 * rate)
    r = subprocess.run(
        [
            "curl",
            "-sS",
            "--unix-socket",
            str(daemon.http),
            "http://localhost/v1/audio/voices",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert json.loads(r.stdout)["voices"][0]["id"] == test_voice.name
