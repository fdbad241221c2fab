"""``hexvoice voice add|list|rm`` against a running service (real sockets)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon.cli.commands import hexvoice as run
from tests.daemon.conftest import Daemon, copy_voice, serving
from tests.daemon.protocols.openai.test_voices import clip

CLONING = {"min_seconds": 0.5, "max_seconds": 4.0}
#: A registration waits in the service's queue like any request.
REGISTER_TIMEOUT_S = 120.0


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice) -> Iterator[Daemon]:
    tmp = tmp_path_factory.mktemp("voice_cli")
    cloner = copy_voice(test_voice, tmp / "cloner", "cloner", cloning=CLONING)
    yield from serving(
        tmp / "d",
        cloner,
        voice_store={"dir": str(tmp / "store")},
        engine={"backend": "cpu"},
    )


def hexvoice(d: Daemon, *args: str, socket: Path | None = None):
    """``hexvoice ARGS --socket`` the daemon's HTTP socket (or ``socket``)."""
    return run(*args, "--socket", str(socket or d.http), timeout=REGISTER_TIMEOUT_S)


def test_add_list_say_remove(daemon: Daemon, tmp_path: Path):
    ref = tmp_path / "ref.wav"
    ref.write_bytes(clip())
    p = hexvoice(daemon, "voice", "add", "anna", "--clip", str(ref), "--text", "hi")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "anna: added (test-tone, cloner)"

    p = hexvoice(daemon, "voice", "list")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["anna", "en_US", "test-tone", "via", "cloner"]
    p = hexvoice(daemon, "voice", "list", "--json")
    (entry,) = json.loads(p.stdout)
    assert entry["transcript"] == "hi" and entry["available"] is True

    # `hexvoice voices` (Wyoming info) lists it beside the engine's own voice.
    p = hexvoice(daemon, "voices", socket=daemon.wyoming)
    assert p.returncode == 0, p.stderr
    names = [line.split()[0] for line in p.stdout.splitlines()]
    assert names == ["cloner", "anna"], p.stdout
    out = tmp_path / "anna.wav"
    p = hexvoice(daemon, "say", "one two", "--voice", "anna", "-o", str(out),
                 socket=daemon.wyoming)  # fmt: skip
    assert p.returncode == 0 and out.stat().st_size > 1000, p.stderr

    p = hexvoice(daemon, "voice", "rm", "anna")
    assert (p.returncode, p.stdout.strip()) == (0, "anna: removed"), p.stderr
    assert hexvoice(daemon, "voice", "list").stdout == ""


def test_refusals_exit_1_with_the_service_reason(daemon: Daemon, tmp_path: Path):
    short = tmp_path / "short.wav"
    short.write_bytes(clip(seconds=0.1))
    p = hexvoice(daemon, "voice", "add", "bob", "--clip", str(short))
    assert p.returncode == 1, p.stdout
    assert "service error (HTTP 400): file: expected at least 0.5 s" in p.stderr
    p = hexvoice(daemon, "voice", "add", "../x", "--clip", str(short))
    assert p.returncode == 1 and "name: expected a name of 1-64" in p.stderr
    p = hexvoice(daemon, "voice", "rm", "nobody")
    assert p.returncode == 1 and "HTTP 404" in p.stderr
    # --lang and --aux reach the service (this voice speaks en_US, takes no aux).
    ref = tmp_path / "ref.wav"
    ref.write_bytes(clip())
    p = hexvoice(daemon, "voice", "add", "c", "--clip", str(ref), "--lang", "zh")
    assert p.returncode == 1 and "language: expected one of ['en_US']" in p.stderr
    p = hexvoice(daemon, "voice", "add", "c", "--clip", str(ref), "--aux", str(ref))
    assert p.returncode == 1 and "aux: expected at most 0 aux clip(s)" in p.stderr
    p = hexvoice(daemon, "voice", "add", "x", "--clip", str(tmp_path / "missing.wav"))
    assert p.returncode == 1 and "missing.wav" in p.stderr
    p = hexvoice(daemon, "voice", "list", socket=daemon.wyoming)
    assert p.returncode == 1 and "does not answer HTTP" in p.stderr
    p = hexvoice(daemon, "voice", "list", socket=tmp_path / "nothing.sock")
    assert p.returncode == 1 and "cannot reach hexvoice" in p.stderr
