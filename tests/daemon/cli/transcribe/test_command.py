"""``hexvoice transcribe`` through the running service and in-process (--bundle)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.daemon.asr_service import asr_daemon, model_bundle
from tests.daemon.cli.commands import free_port
from tests.daemon.conftest import ROOT, Daemon
from tests.daemon.protocols.audio_samples import (
    RATE,
    encode,
    nan_wav,
    speech,
    speech_wav,
)

#: What test-vad hears in ``speech()`` (tests/daemon/protocols/audio_samples.py).
TEXT = "speech 0.30-0.90speech 1.40-1.80"
SRT = (
    "1\n00:00:00,300 --> 00:00:00,900\nspeech 0.30-0.90\n\n"
    "2\n00:00:01,400 --> 00:00:01,800\nspeech 1.40-1.80\n"
)


PORT = free_port()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice, bins, onnx_dir) -> Iterator[Daemon]:
    tmp = tmp_path_factory.mktemp("transcribe")
    listen = {"tcp_http": f"127.0.0.1:{PORT}"}
    yield from asr_daemon(tmp, test_voice, bins, onnx_dir, listen=listen)


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("clips") / "speech.flac"
    path.write_bytes(encode(speech(), RATE, "FLAC"))
    return str(path)


def _hexvoice(*args: str, env: dict[str, str] | None = None, stdin: bytes = b""):
    p = subprocess.run(
        [sys.executable, "-m", "daemon.cli", "transcribe", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        input=stdin,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        p.args, p.returncode, p.stdout.decode(), p.stderr.decode()
    )


def test_text_through_the_service(daemon: Daemon, clip):
    r = _hexvoice(clip, "--socket", str(daemon.http))
    assert (r.returncode, r.stdout, r.stderr) == (0, TEXT + "\n", "")


def test_standard_input(daemon: Daemon, clip):
    data = open(clip, "rb").read()
    r = _hexvoice("-", "--socket", str(daemon.http), stdin=data)
    assert (r.returncode, r.stdout) == (0, TEXT + "\n"), r.stderr


@pytest.mark.parametrize("fmt", ["json", "verbose_json", "srt", "vtt"])
def test_formats_through_the_service(daemon: Daemon, clip, fmt):
    r = _hexvoice(clip, "--socket", str(daemon.http), "--format", fmt)
    assert r.returncode == 0, r.stderr
    if fmt == "json":
        assert json.loads(r.stdout)["text"] == TEXT
    elif fmt == "verbose_json":
        out = json.loads(r.stdout)
        assert [s["start"] for s in out["segments"]] == [0.3, 1.4]
    elif fmt == "srt":
        assert r.stdout == SRT
    else:
        assert r.stdout.startswith("WEBVTT\n\n00:00:00.300 --> 00:00:00.900\n")


def test_language_prompt_output_file_and_tcp(daemon: Daemon, clip, tmp_path):
    out = tmp_path / "out.srt"
    r = _hexvoice(
        clip,
        "--socket",
        f"http://127.0.0.1:{PORT}",
        "--language",
        "en",
        "--prompt",
        "Joe",
        "--format",
        "srt",
        "-o",
        str(out),
    )
    assert (r.returncode, r.stdout) == (0, ""), r.stderr
    assert out.read_text() == SRT


def test_a_refused_file_exits_1_with_the_services_reason(daemon: Daemon, tmp_path):
    bad = tmp_path / "nan.wav"
    bad.write_bytes(nan_wav())
    r = _hexvoice(str(bad), "--socket", str(daemon.http))
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert "HTTP 400" in r.stderr and "file: expected finite samples" in r.stderr
    r = _hexvoice(str(bad), "--socket", str(daemon.http), "--language", "xx")
    assert r.returncode == 1 and "language: expected a language" in r.stderr


def test_the_wyoming_socket_is_named_as_the_wrong_one(daemon: Daemon, clip):
    r = _hexvoice(clip, "--socket", str(daemon.wyoming))
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert "does not answer HTTP" in r.stderr and "Traceback" not in r.stderr


def test_unreachable_service_missing_file_and_bad_usage(clip, tmp_path):
    r = _hexvoice(clip, "--socket", str(tmp_path / "none.sock"))
    assert r.returncode == 1 and "is `hexvoice serve` running?" in r.stderr
    r = _hexvoice(str(tmp_path / "missing.wav"))
    assert r.returncode == 1 and "No such file" in r.stderr
    r = _hexvoice(clip, "--format", "mp3")
    assert r.returncode == 2 and "invalid choice" in r.stderr
    r = _hexvoice(clip, "--socket", "x.sock", "--bundle", "y")
    assert r.returncode == 2 and "not allowed with" in r.stderr


def test_in_process_gives_the_services_text(daemon: Daemon, clip, test_voice):
    vad = model_bundle(daemon)
    for fmt, want in (("text", TEXT + "\n"), ("srt", SRT)):
        r = _hexvoice(clip, "--bundle", str(vad), "--format", fmt, env=test_voice.env)
        assert (r.returncode, r.stdout) == (0, want), r.stderr


def test_in_process_refusals(daemon: Daemon, test_voice, tmp_path):
    vad = model_bundle(daemon)
    wav = tmp_path / "eight.wav"
    wav.write_bytes(speech_wav(rate=4000))
    r = _hexvoice(str(wav), "--bundle", str(vad), env=test_voice.env)
    assert r.returncode == 1 and "file.sample_rate: expected" in r.stderr, r.stderr
    r = _hexvoice(str(wav), "--bundle", str(test_voice.bundle), env=test_voice.env)
    assert r.returncode == 1 and "does not recognise speech" in r.stderr, r.stderr
