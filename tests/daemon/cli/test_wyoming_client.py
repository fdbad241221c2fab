"""``hexvoice say`` / ``hexvoice voices`` against the running service."""

from __future__ import annotations

import json
import wave

import pytest

from tests.daemon.cli.commands import free_port, hexvoice
from tests.daemon.conftest import Daemon

PORT = free_port()


@pytest.fixture(scope="module")
def daemon(daemon_factory) -> Daemon:
    # Also an explicit TCP listener (off by default), on loopback.
    return daemon_factory("cli", listen={"tcp_wyoming": f"127.0.0.1:{PORT}"})


def test_say_writes_a_wav(daemon: Daemon, test_voice, tmp_path):
    out = tmp_path / "out.wav"
    r = hexvoice(
        "say",
        "hello from the command line",
        "-o",
        str(out),
        "--socket",
        str(daemon.wyoming),
    )
    assert r.returncode == 0, r.stderr
    assert "first audio after" in r.stderr
    with wave.open(str(out)) as w:
        assert (w.getframerate(), w.getsampwidth(), w.getnchannels()) == (
            test_voice.sample_rate,
            2,
            1,
        )
        assert w.getnframes() == 5 * round(0.12 * test_voice.sample_rate)


def test_say_with_voice_and_speaker_via_uri(daemon: Daemon, test_voice, tmp_path):
    out = tmp_path / "v.wav"
    r = hexvoice(
        "say",
        "pick me",
        "-o",
        str(out),
        "--socket",
        daemon.uri,
        "--voice",
        test_voice.name,
        "--speaker",
        "1",
    )
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 44


def test_say_reports_service_errors(daemon: Daemon, tmp_path):
    r = hexvoice(
        "say",
        "x",
        "--voice",
        "../nobody",
        "-o",
        str(tmp_path / "x.wav"),
        "--socket",
        str(daemon.wyoming),
    )
    assert r.returncode == 1
    assert "service error (voice_not_found)" in r.stderr
    assert not (tmp_path / "x.wav").exists()


def test_say_language_reaches_the_service_with_the_voice(daemon, test_voice, tmp_path):
    # wyoming's SynthesizeVoice would drop the language beside a name: the
    # refusal proves the service read it (the tone voice speaks en_US only).
    out = str(tmp_path / "x.wav")
    common = ["say", "x", "--voice", test_voice.name, "-o", out, "--socket"]
    r = hexvoice(*common, str(daemon.wyoming), "--language", "zh_CN")
    assert r.returncode == 1, r.stderr
    assert "unsupported_language" in r.stderr and "zh_CN" in r.stderr
    r = hexvoice(*common, str(daemon.wyoming), "--language", "en")
    assert r.returncode == 0, r.stderr


def test_say_without_a_service_says_how_to_fix_it(tmp_path):
    r = hexvoice("say", "x", "--socket", str(tmp_path / "none.sock"))
    assert r.returncode == 1
    assert "cannot reach hexvoice" in r.stderr and "hexvoice serve" in r.stderr


def test_voices_lists_them(daemon: Daemon, test_voice):
    r = hexvoice("voices", "--socket", str(daemon.wyoming))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == test_voice.name and "en_US" in r.stdout
    r = hexvoice("voices", "--json", "--socket", str(daemon.wyoming))
    (v,) = json.loads(r.stdout)
    assert v["name"] == test_voice.name and v["speakers"] == [
        {"name": "0"},
        {"name": "1"},
    ]


def test_tcp_listener_when_configured(daemon: Daemon, test_voice):
    r = hexvoice("voices", "--socket", f"tcp://127.0.0.1:{PORT}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == test_voice.name
