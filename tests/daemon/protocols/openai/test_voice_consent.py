"""Consent for cloning on a real service: a statement the caller gives with the
clip, refused when missing where the engine or ``voice_store.require_consent``
asks for it (nothing queued, nothing stored), kept in the voice file, listed,
and given through ``hexvoice voice add --consent``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from daemon.service.cloning import voicefile
from tests.daemon.conftest import Daemon, ServiceVoice, copy_voice
from tests.daemon.protocols.openai.test_voices import MAX_S, MIN_S, clip
from tests.daemon.service.reloads import sighup
from tests.daemon.voice_clients import serving, stored

STATEMENT = "Anna agreed on 2 December 2026 to have her voice cloned for this box."


@pytest.fixture(scope="module")
def setup(test_voice: ServiceVoice, tmp_path_factory) -> Iterator[dict[str, Any]]:
    """A service with a cloner that leaves consent to the config and one
    whose engine requires it (as a licence can)."""
    root = tmp_path_factory.mktemp("consent")
    spec = {"min_seconds": MIN_S, "max_seconds": MAX_S}
    free = copy_voice(test_voice, root / "free", "free", cloning=spec)
    strict = copy_voice(
        test_voice, root / "strict", "strict", cloning={**spec, "consent": "required"}
    )
    store = root / "store"
    sections = {
        "voices": [{"bundle": str(free.bundle)}, {"bundle": str(strict.bundle)}],
        "voice_store": {"dir": str(store), "max_count": 8},
        "engine": {"backend": "cpu"},
    }
    with serving(root / "d", test_voice, **sections) as d:
        yield {"daemon": d, "store": store}


def add(d: Daemon, name: str, **fields: str) -> httpx.Response:
    files = {"file": ("ref.wav", clip(), "audio/wav")}
    with d.http_client() as c:
        return c.post("/v1/voices", data={"name": name, **fields}, files=files)


def listed(d: Daemon) -> dict[str, dict[str, Any]]:
    with d.http_client() as c:
        return {v["name"]: v for v in c.get("/v1/voices").json()["data"]}


def refused(r: httpx.Response, code: str, words: str) -> None:
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert (error["param"], error["code"]) == ("consent", code), error
    assert words in error["message"], error


def test_consent_is_stored_in_the_file_and_listed(setup):
    d, store = setup["daemon"], setup["store"]
    r = add(d, "anna", model="free", consent=f"  {STATEMENT}\n")
    assert r.status_code == 201, r.text
    assert r.json()["consent"] == STATEMENT  # whitespace folded, as stored
    assert listed(d)["anna"]["consent"] == STATEMENT
    entry = voicefile.decode((store / "anna.voice").read_bytes(), "anna.voice")
    assert entry.consent == STATEMENT and entry.verified
    # Optional for this engine: a voice without one is listed with null.
    assert add(d, "bert", model="free").status_code == 201
    assert listed(d)["bert"]["consent"] is None


def test_an_engine_that_requires_consent_refuses_without_it(setup):
    d, store = setup["daemon"], setup["store"]
    before = stored(store)
    for fields in ({}, {"consent": "   "}):
        r = add(d, "carl", model="strict", **fields)
        refused(r, "missing_required_parameter", "consents to being cloned")
    assert stored(store) == before and "carl" not in listed(d)
    r = add(d, "carl", model="strict", consent=STATEMENT)
    assert r.status_code == 201, r.text
    assert listed(d)["carl"]["consent"] == STATEMENT


@pytest.mark.parametrize(
    ("consent", "words"),
    [("x" * 1001, "at most 1000 characters"), ("yes\x00no", "printable text")],
)
def test_a_bad_statement_is_refused_and_leaves_nothing(setup, consent, words):
    d, store = setup["daemon"], setup["store"]
    before = stored(store)
    refused(add(d, "dora", model="free", consent=consent), "invalid_value", words)
    assert stored(store) == before and "dora" not in listed(d)


def test_require_consent_in_the_config_applies_at_a_reload(setup):
    d = setup["daemon"]
    cfg = yaml.safe_load(d.config.read_text())
    cfg["voice_store"]["require_consent"] = True
    d.config.write_text(yaml.safe_dump(cfg))
    try:
        sighup(d)
        r = add(d, "emil", model="free")
        refused(r, "missing_required_parameter", "consents to being cloned")
        assert "emil" not in listed(d)
        # The CLI gives it with --consent.
        proc = subprocess.run(
            [sys.executable, "-m", "daemon.cli", "voice", "add", "emil",
             "--clip", str(_clip_file(d)), "--model", "free",
             "--consent", STATEMENT, "--socket", str(d.http)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        out = subprocess.run(
            [sys.executable, "-m", "daemon.cli", "voice", "list", "--json",
             "--socket", str(d.http)],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        assert {v["name"]: v["consent"] for v in json.loads(out)}["emil"] == STATEMENT
    finally:
        cfg["voice_store"]["require_consent"] = False
        d.config.write_text(yaml.safe_dump(cfg))
        sighup(d)
    assert add(d, "finn", model="free").status_code == 201


def _clip_file(d: Daemon):
    path = d.dir / "emil.wav"
    path.write_bytes(clip())
    return path
