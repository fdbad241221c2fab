"""An engine under a licence its user must accept: nothing of it loads until
the licence is accepted where it runs (config ``accept_licenses``,
``--accept-license``) and its bundle records the build accepted it; each
refusal names the agreement, where to read it and how to accept, exits as a
configuration error (78 for the service) and loads no model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.license import License, LicenseNotAccepted, check_accepted
from daemon.sdk.local import open_engine
from tests.bundle_edits import edit_manifest
from tests.daemon.conftest import ROOT, ServiceVoice, copy_voice, write_config
from tests.daemon.tone_engine import TEST_LICENSE, LicensedToneEngine, ToneEngine
from tests.daemon.voice_clients import serving
from tests.engine_site import LICENSED_ENGINE, engine_site

ACCEPTED = (TEST_LICENSE.id,)


@pytest.fixture(autouse=True)
def test_engines(tmp_path_factory, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(engine_site(tmp_path_factory.mktemp("site"))))


def licensed(voice: ServiceVoice, dest: Path, recorded: str | None) -> ServiceVoice:
    """A copy of the tone voice served by the licensed engine; ``recorded``: the
    licence its manifest says the build accepted."""
    copy = copy_voice(voice, dest, "licensed")

    def edit(m: dict) -> None:
        m["engine"] = LICENSED_ENGINE
        if recorded is not None:
            m["license"] = recorded

    edit_manifest(copy.bundle, edit)
    return copy


def test_the_check(test_voice, tmp_path):
    good = Bundle.load(licensed(test_voice, tmp_path / "a", TEST_LICENSE.id).bundle)
    bare = Bundle.load(licensed(test_voice, tmp_path / "b", None).bundle)
    assert check_accepted(LicensedToneEngine, good, ACCEPTED) == TEST_LICENSE
    with pytest.raises(LicenseNotAccepted) as no:
        check_accepted(LicensedToneEngine, good, ())
    for words in (
        "Test Model Use Agreement",
        "has not been accepted",
        "tests/daemon/tone_engine.py",
        "accept_licenses: [test-model-use]",
        "--accept-license test-model-use",
    ):
        assert words in str(no.value)
    with pytest.raises(LicenseNotAccepted, match="found no license; build it again"):
        check_accepted(LicensedToneEngine, bare, ACCEPTED)
    other = Bundle.load(licensed(test_voice, tmp_path / "c", "other-terms").bundle)
    with pytest.raises(LicenseNotAccepted, match="found license: other-terms"):
        check_accepted(LicensedToneEngine, other, ACCEPTED)
    # An engine under open terms needs nothing.
    assert check_accepted(ToneEngine, Bundle.load(test_voice.bundle), ()) is None
    assert Bundle.load(test_voice.bundle).to_dict().get("license") is None
    assert good.to_dict()["license"] == TEST_LICENSE.id
    with pytest.raises(ValueError, match="lowercase words and dashes"):
        License("Bad Id", "t", "x")


def test_in_process_engines_refuse_before_loading(test_voice, tmp_path):
    voice = licensed(test_voice, tmp_path / "v", TEST_LICENSE.id)
    live = ToneEngine.live
    with pytest.raises(LicenseNotAccepted), open_engine(voice.bundle, "cpu"):
        pass
    assert ToneEngine.live == live  # no engine was made
    with open_engine(voice.bundle, "cpu", accept_licenses=ACCEPTED) as (engine, _):
        assert engine.engine_id == LICENSED_ENGINE


def _serve(voice: ServiceVoice, config: Path, *flags: str):
    return subprocess.run(
        [sys.executable, "-m", "daemon.cli", "serve", "--config", str(config), *flags],
        cwd=ROOT,
        env={**os.environ, **voice.env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_service_refuses_at_once_with_exit_78(test_voice, tmp_path):
    voice = licensed(test_voice, tmp_path / "v", TEST_LICENSE.id)
    config = write_config(tmp_path / "c.yaml", voice, tmp_path / "run")
    r = _serve(voice, config)
    assert r.returncode == 78, r.stderr
    assert "Test Model Use Agreement" in r.stderr and "--accept-license" in r.stderr
    assert "loaded in" not in r.stderr and "Traceback" not in r.stderr
    bare = licensed(test_voice, tmp_path / "bare", None)
    config = write_config(tmp_path / "b.yaml", bare, tmp_path / "run")
    r = _serve(bare, config, "--accept-license", TEST_LICENSE.id)
    assert r.returncode == 78, r.stderr
    assert "build it again with --accept-license test-model-use" in r.stderr


def test_accepted_in_the_config_it_serves(test_voice, tmp_path):
    voice = licensed(test_voice, tmp_path / "v", TEST_LICENSE.id)
    sections = {"accept_licenses": list(ACCEPTED), "engine": {"backend": "cpu"}}
    with serving(tmp_path / "d", voice, **sections) as d, d.http_client() as c:
        body = {"model": "tts-1", "voice": "licensed", "input": "one two"}
        r = c.post("/v1/audio/speech", json={**body, "response_format": "pcm"})
        assert r.status_code == 200 and len(r.content) > 0, r.text


def test_say_in_process_needs_the_flag(test_voice, tmp_path):
    voice = licensed(test_voice, tmp_path / "v", TEST_LICENSE.id)
    out = tmp_path / "out.wav"
    argv = [sys.executable, "-m", "daemon.cli", "say", "one two", "-o", str(out),
            "--bundle", str(voice.bundle), "--backend", "cpu"]  # fmt: skip
    env = {**os.environ, **voice.env}
    r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 1 and "Test Model Use Agreement" in r.stderr, r.stderr
    assert not out.exists()
    flag = ["--accept-license", TEST_LICENSE.id]
    r = subprocess.run(argv + flag, cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 44
