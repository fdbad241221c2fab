"""``POST /v1/audio/transcriptions`` on a running service (tone voice + test-vad
ASR model side by side): the official SDK, curl and httpx as clients."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import Iterator

import httpx
import numpy as np
import openai
import pytest

from tests.daemon import voice_clients
from tests.daemon.asr_service import ASR_MODEL, asr_daemon
from tests.daemon.conftest import Daemon
from tests.daemon.protocols.audio_samples import (
    BAD_FILES,
    RATE,
    encode,
    silent_wav,
    speech,
    speech_wav,
)

needs_curl = pytest.mark.skipif(
    shutil.which("curl") is None, reason="curl not installed (apt-get install curl)"
)
ASR = ASR_MODEL
#: What test-vad hears in ``speech()``: the two bursts (audio_samples.BURSTS).
SEGMENTS = ((0.3, 0.9), (1.4, 1.8))
TEXT = "".join(f"speech {a:.2f}-{b:.2f}" for a, b in SEGMENTS)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice, bins, onnx_dir) -> Iterator[Daemon]:
    tmp = tmp_path_factory.mktemp("asr")
    yield from asr_daemon(tmp, test_voice, bins, onnx_dir)


@pytest.fixture(scope="module")
def sdk(daemon: Daemon) -> openai.OpenAI:
    return voice_clients.sdk(daemon)


def _upload(daemon: Daemon, data: bytes, **fields: str) -> httpx.Response:
    with daemon.http_client() as c:
        return c.post(
            "/v1/audio/transcriptions",
            files={"file": ("clip.wav", data, "audio/wav")},
            data={"model": "whisper-1", **fields},
        )


def test_sdk_json(sdk: openai.OpenAI):
    out = sdk.audio.transcriptions.create(
        model="whisper-1", file=("clip.wav", speech_wav())
    )
    assert out.text == TEXT
    assert out.usage.type == "duration" and out.usage.seconds == pytest.approx(2.2)


def test_sdk_model_by_name_and_language(sdk: openai.OpenAI):
    out = sdk.audio.transcriptions.create(
        model=ASR, file=("clip.wav", speech_wav()), language="en", prompt="Joe"
    )
    assert out.text == TEXT


def test_sdk_verbose_json_has_segments(sdk: openai.OpenAI):
    out = sdk.audio.transcriptions.create(
        model="whisper-1",
        file=("clip.wav", speech_wav()),
        response_format="verbose_json",
        language="en",
    )
    assert out.text == TEXT and out.language == "English"  # upstream's name
    assert (out.model_extra or {}).get("language_code") == "en"
    assert out.duration == pytest.approx(2.2)
    got = [(s.id, round(s.start, 6), round(s.end, 6), s.text) for s in out.segments]
    want = [(i, a, b, f"speech {a:.2f}-{b:.2f}") for i, (a, b) in enumerate(SEGMENTS)]
    assert got == want


def test_sdk_text_srt_vtt(sdk: openai.OpenAI):
    def create(fmt: str) -> str:
        return sdk.audio.transcriptions.create(
            model="whisper-1", file=("clip.wav", speech_wav()), response_format=fmt
        )

    assert create("text") == TEXT + "\n"
    assert create("srt") == (
        "1\n00:00:00,300 --> 00:00:00,900\nspeech 0.30-0.90\n\n"
        "2\n00:00:01,400 --> 00:00:01,800\nspeech 1.40-1.80\n"
    )
    assert create("vtt") == (
        "WEBVTT\n\n00:00:00.300 --> 00:00:00.900\nspeech 0.30-0.90\n\n"
        "00:00:01.400 --> 00:00:01.800\nspeech 1.40-1.80\n"
    )


def test_sdk_stream_deltas_then_done(sdk: openai.OpenAI):
    events = list(
        sdk.audio.transcriptions.create(
            model="whisper-1", file=("clip.wav", speech_wav()), stream=True
        )
    )
    *deltas, done = events
    assert done.type == "transcript.text.done" and done.text == TEXT
    assert deltas and {e.type for e in deltas} == {"transcript.text.delta"}
    # test-vad's partials ("speech 0.30") grow into its finals: the deltas
    # add up to the whole text.
    assert "".join(e.delta for e in deltas) == TEXT


@needs_curl
def test_curl_multipart(daemon: Daemon, tmp_path):
    clip = tmp_path / "clip.flac"
    clip.write_bytes(encode(speech(), RATE, "FLAC"))
    p = subprocess.run(
        ["curl", "-sS", "--fail-with-body", "--unix-socket", str(daemon.http),
         "http://localhost/v1/audio/transcriptions",
         "-F", f"file=@{clip}", "-F", "model=whisper-1", "-F", "response_format=json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["text"] == TEXT


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(lambda: speech_wav(channels=8), id="8_channels"),
        pytest.param(lambda: speech_wav(rate=192000), id="192kHz"),
        pytest.param(lambda: speech_wav(rate=8000, channels=2), id="8kHz_stereo"),
        pytest.param(lambda: encode(speech(), RATE, "OGG"), id="ogg_vorbis"),
    ],
)
def test_any_rate_and_channel_count_transcribe_alike(daemon: Daemon, data):
    r = _upload(daemon, data())
    assert r.status_code == 200, r.text
    assert r.json()["text"] == TEXT


def test_silence_is_an_empty_transcript(daemon: Daemon):
    r = _upload(daemon, silent_wav(), response_format="verbose_json")
    assert r.status_code == 200, r.text
    assert (r.json()["text"], r.json()["segments"]) == ("", [])
    assert _upload(daemon, silent_wav(), response_format="srt").text == ""


@pytest.mark.parametrize("bad", BAD_FILES, ids=[b.name for b in BAD_FILES])
def test_bad_files_are_400_and_the_service_keeps_serving(daemon: Daemon, bad):
    r = _upload(daemon, bad.make())
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert (error["param"], error["code"]) == ("file", bad.code), error
    assert error["type"] == "invalid_request_error" and bad.says in error["message"]
    assert _upload(daemon, speech_wav()).json()["text"] == TEXT  # still serving


def test_bad_files_are_refused_before_a_stream_starts(sdk: openai.OpenAI):
    (nan,) = [b for b in BAD_FILES if b.name == "nan_samples"]
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.audio.transcriptions.create(
            model="whisper-1", file=("clip.wav", nan.make()), stream=True
        )
    assert caught.value.code == "invalid_audio" and caught.value.param == "file"


@pytest.mark.parametrize(
    "fields, param, code",
    [
        ({"model": "tts-2"}, "model", "voice_not_found"),
        ({"model": "tone"}, "model", "voice_not_found"),  # a TTS voice
        ({"response_format": "mp3"}, "response_format", "unsupported_format"),
        ({"stream": "maybe"}, "stream", "invalid_type"),
        ({"language": "xx"}, "language", "unsupported_language"),
    ],
)
def test_bad_fields_are_400_naming_the_field(daemon: Daemon, fields, param, code):
    r = _upload(daemon, speech_wav(), **fields)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert (error["param"], error["code"]) == (param, code), error
    assert error["message"].startswith(f"{param}: expected "), error


def test_unknown_fields_are_ignored(daemon: Daemon):
    r = _upload(
        daemon,
        speech_wav(),
        temperature="0.2",
        **{"timestamp_granularities[]": "segment", "include[]": "logprobs"},
    )
    assert r.status_code == 200 and r.json()["text"] == TEXT, r.text


def test_a_form_without_file_or_not_multipart_is_400(daemon: Daemon):
    with daemon.http_client() as c:
        only_model = {"model": (None, "whisper-1")}  # multipart, without a file
        r = c.post("/v1/audio/transcriptions", files=only_model)
        assert r.status_code == 400 and r.json()["error"]["param"] == "file", r.text
        r = c.post("/v1/audio/transcriptions", json={"model": "whisper-1"})
        assert r.status_code == 400 and "multipart/form-data" in r.text, r.text
        r = c.post("/v1/audio/transcriptions", files={"file": ("a.wav", speech_wav())})
        assert r.status_code == 400 and r.json()["error"]["param"] == "model"


def test_an_upload_over_25_mb_is_413_and_the_service_keeps_serving(daemon: Daemon):
    big = np.zeros(26 * 1024 * 1024, np.uint8).tobytes()
    r = _upload(daemon, big)
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "payload_too_large"
    assert _upload(daemon, speech_wav()).json()["text"] == TEXT


def test_models_lists_the_asr_model(daemon: Daemon):
    with daemon.http_client() as c:
        ids = {m["id"] for m in c.get("/v1/models").json()["data"]}
        voices = {v["id"] for v in c.get("/v1/audio/voices").json()["voices"]}
    assert {ASR, "whisper-1", "tts-1"} <= ids
    assert ASR not in voices  # not a voice to speak with


def test_a_client_leaving_mid_stream_frees_the_service(daemon: Daemon):
    long = encode(np.tile(speech(), 20), RATE)  # 44 s: 40 segments
    form = {"model": "whisper-1", "stream": "true"}
    with daemon.http_client() as c:
        files = {"file": ("long.wav", long, "audio/wav")}
        with c.stream("POST", "/v1/audio/transcriptions", files=files, data=form) as r:
            assert r.status_code == 200
            assert r.headers["content-type"] == "text/event-stream"
            first = next(line for line in r.iter_lines() if line.startswith("data:"))
            assert json.loads(first[5:])["type"] == "transcript.text.delta"
    assert _upload(daemon, speech_wav()).json()["text"] == TEXT


def test_a_service_without_an_asr_model_says_so(daemon_factory):
    tts_only = daemon_factory("tts_only")
    r = _upload(tts_only, speech_wav())
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["param"] == "model" and "none is loaded" in error["message"]


def test_the_configured_cap_applies(tmp_path_factory, test_voice, bins, onnx_dir):
    tmp = tmp_path_factory.mktemp("capped")
    service = asr_daemon(tmp, test_voice, bins, onnx_dir, limits={"max_audio_s": 5})
    capped = next(service)
    try:
        r = _upload(capped, encode(np.tile(speech(), 3), RATE))  # 6.6 s
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["param"] == "file" and error["code"] == "invalid_value"
        assert error["message"] == (
            "file: expected at most 5 s of audio, found 6.60 s"
        ), error
        assert _upload(capped, speech_wav()).json()["text"] == TEXT  # 2.2 s
    finally:
        next(service, None)  # stops it, checking a clean exit


def test_an_error_after_the_stream_started_is_an_sse_error(
    tmp_path_factory, test_voice, bins, onnx_dir
):
    tmp = tmp_path_factory.mktemp("stopping")
    service = asr_daemon(tmp, test_voice, bins, onnx_dir)
    d = next(service)
    http = httpx.Client(transport=httpx.HTTPTransport(uds=str(d.http)))
    client = openai.OpenAI(
        base_url="http://localhost/v1", api_key="-", max_retries=0, http_client=http
    )
    long = encode(np.tile(speech(), 60), RATE)  # 132 s
    events = client.audio.transcriptions.create(
        model="whisper-1", file=("long.wav", long), stream=True
    )
    try:
        with pytest.raises(openai.APIError) as caught:
            for n, event in enumerate(events):
                assert event.type == "transcript.text.delta"
                if n == 0:
                    d.proc.send_signal(signal.SIGTERM)  # cancels every request
        assert "service stopping" in caught.value.message
        assert caught.value.body["type"] == "server_error"
    finally:
        next(service, None)  # a clean exit, no traceback
