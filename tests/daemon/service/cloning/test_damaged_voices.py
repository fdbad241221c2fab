"""Damaged voice files on a real service (the tone engine clones; CPU backend):
each is listed with what is wrong, refused clearly when asked to speak (HTTP
409, Wyoming ``error``), deleted and replaced through the API, and leaves the
other voices speaking; files changed behind the service's back, unreadable
files and a read-only store."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from daemon.cli.errors import CommandError
from daemon.cli.wyoming_client import synthesize
from tests.daemon.cli.test_voice import hexvoice
from tests.daemon.conftest import Daemon, ServiceVoice, copy_voice, start_daemon
from tests.daemon.protocols.openai.test_voices import add, clip, pitch, say
from tests.daemon.service.cloning import damage
from tests.daemon.service.reloads import sighup
from tests.daemon.voice_clients import info, serving, stored

CLONING = {"min_seconds": 0.5, "max_seconds": 4.0}
#: Each voice's clip pitch (Hz): a test hears which voice spoke.
HZ = {"good": 300.0, "old": 350.0, "cut": 400.0, "flip": 450.0, "sum": 500.0,
      "oldcut": 550.0, "stale": 600.0}  # fmt: skip
DAMAGED = ("cut", "flip", "sum", "oldcut")
#: A replacement's pitch, unlike every stored one.
NEW_HZ = 700.0
TOLERANCE_HZ = 10


def cloner(test_voice: ServiceVoice, root: Path) -> ServiceVoice:
    return copy_voice(test_voice, root / "cloner", "cloner", cloning=CLONING)


def sections(store: Path) -> dict[str, Any]:
    return {"voice_store": {"dir": str(store)}, "engine": {"backend": "cpu"}}


@pytest.fixture(scope="module")
def setup(test_voice, tmp_path_factory) -> tuple[ServiceVoice, Path]:
    """Voices registered by a service, then damaged on disk while it is down."""
    root = tmp_path_factory.mktemp("damaged")
    voice, store = cloner(test_voice, root), root / "store"
    with serving(root / "a", voice, **sections(store)) as d:
        for name, hz in HZ.items():
            assert add(d, name, clip(hz=hz)).status_code == 201
    damage.cut(store / "cut.voice")
    damage.flip_array(store / "flip.voice", "pitch")
    damage.flip_checksum(store / "sum.voice")
    damage.to_legacy(store / "old.voice")
    damage.to_legacy(store / "oldcut.voice")
    damage.cut(store / "oldcut.voice")
    damage.remodel(store / "stale.voice", "another-encoder")
    return voice, store


@pytest.fixture(scope="module")
def daemon(setup, tmp_path_factory) -> Iterator[Daemon]:
    voice, store = setup
    with serving(tmp_path_factory.mktemp("b"), voice, **sections(store)) as d:
        yield d


def listed(d: Daemon) -> dict[str, dict[str, Any]]:
    with d.http_client() as c:
        return {v["name"]: v for v in c.get("/v1/voices").json()["data"]}


def offered(d: Daemon) -> set[str]:
    with d.http_client() as c:
        http = {v["name"] for v in c.get("/v1/audio/voices").json()["voices"]}
    (tts,) = info(d).tts
    assert {v.name for v in tts.voices} == http  # Wyoming offers the same
    return http


def test_each_damaged_file_is_listed_with_what_is_wrong(daemon: Daemon):
    v = listed(daemon)
    assert sorted(v) == sorted(HZ)
    state = {n: (e["available"], e["verified"]) for n, e in v.items()}
    assert state["good"] == (True, True) and v["good"]["reason"] is None
    assert state["old"] == (True, False)  # before checksums: unverified, served
    for name in (*DAMAGED, "stale"):
        assert state[name] == (False, False if name in DAMAGED else True), name
    changed = "checksum mismatch: its content was changed since it was written"
    reasons = {
        "cut": "damaged: cut.voice: checksum mismatch: its content was cut short",
        "flip": f"damaged: flip.voice: {changed}",
        "sum": f"damaged: sum.voice: {changed}",
        "oldcut": "damaged: oldcut.voice: not a voice file",
        "stale": "cloner: made with model another-enco, the loaded bundle's is",
    }
    for name, why in reasons.items():
        assert v[name]["reason"].startswith(why), v[name]
    assert v["cut"]["reason"].endswith("(delete it or register it again)")
    # Neither protocol offers a voice that cannot speak.
    assert offered(daemon) == {"cloner", "good", "old"}

    p = hexvoice(daemon, "voice", "list")
    assert p.returncode == 0, p.stderr
    lines = {ln.split()[0]: ln for ln in p.stdout.splitlines()}
    assert "(not offered: damaged: cut.voice: checksum mismatch" in lines["cut"]
    assert lines["cut"].split()[1:3] == ["-", "-"]
    assert lines["old"].endswith("(unverified: stored without a checksum)")
    assert lines["good"].split() == ["good", "en_US", "test-tone", "via", "cloner"]
    log = daemon.stderr()
    for name in DAMAGED:
        assert log.count(f" {name}.voice: ") == 1, log  # said once, at start
    assert "cloned voice 'old': its file has no checksum" in log


def test_speech_with_a_damaged_voice_is_refused_with_the_fix(daemon: Daemon):
    for name in DAMAGED:
        with pytest.raises(openai.ConflictError) as refused:  # 409, not retried
            say(daemon, name)
        r = refused.value.response
        error = r.json()["error"]
        assert (r.status_code, error["code"], error["param"]) == (
            409, "voice_unusable", "voice"
        ), error  # fmt: skip
        assert r.headers["x-should-retry"] == "false"
        words = (
            f"the stored cloned voice {name!r} is damaged ({name}.voice: ",
            "register it again under the same name",
            f"DELETE /v1/voices/{name}",
        )
        for w in words:
            assert w in error["message"], error
        with pytest.raises(CommandError) as wy:
            asyncio.run(synthesize(daemon.uri, "one", voice=name))
        assert f"(voice_unusable): voice: the stored cloned voice {name!r} is " in str(
            wy.value
        )
    p = hexvoice(daemon, "say", "one", "--voice", "flip", "-o", "/dev/null",
                 socket=daemon.wyoming)  # fmt: skip
    assert p.returncode == 1 and "'flip' is damaged" in p.stderr, p.stderr
    # The other voices speak as they were made (no flipped pitch reaches one).
    for name in ("good", "old"):
        audio, rate = say(daemon, name)
        assert pitch(audio, rate) == pytest.approx(HZ[name], abs=TOLERANCE_HZ)
    m = daemon.metrics()
    assert m.get('hexvoice_requests_total{outcome="error",protocol="http"}', 0) == 0


def test_damaged_voices_are_deleted_and_replaced(daemon: Daemon, setup):
    _, store = setup
    with daemon.http_client() as c:
        r = c.delete("/v1/voices/cut")
    assert (r.status_code, r.json()) == (
        200, {"id": "cut", "object": "voice", "deleted": True}
    )  # fmt: skip
    assert "cut" not in listed(daemon) and "cut.voice" not in stored(store)
    for name in ("flip", "sum", "oldcut", "stale"):
        r = add(daemon, name, clip(hz=NEW_HZ))
        assert r.status_code == 201, r.text
        assert (r.json()["available"], r.json()["verified"]) == (True, True)
        audio, rate = say(daemon, name)
        assert pitch(audio, rate) == pytest.approx(NEW_HZ, abs=TOLERANCE_HZ)
        assert damage.read(store / f"{name}.voice").verified
    # A good voice is never replaced, checksummed or not.
    for name in ("good", "old"):
        r = add(daemon, name, clip(hz=NEW_HZ))
        assert r.status_code == 409 and r.json()["error"]["code"] == "voice_exists"
    assert offered(daemon) == {"cloner", *HZ} - {"cut"}
    assert stored(store) == sorted(f"{n}.voice" for n in HZ if n != "cut")


def test_files_changed_behind_the_running_service(test_voice, tmp_path: Path):
    """A name taken on disk since the last scan is neither stuck nor hidden;
    a reload (SIGHUP) reads the store again: new files are offered or listed
    as damaged, a vanished one is dropped."""
    voice, store = cloner(test_voice, tmp_path), tmp_path / "store"
    with serving(tmp_path / "d", voice, **sections(store)) as d:
        for name in ("keep", "vanish"):
            assert add(d, name, clip(hz=HZ["good"])).status_code == 201
        shutil.copy(store / "keep.voice", store / "later.voice")
        damage.cut(store / "later.voice")
        (store / "hand.voice").write_bytes(b"\x00 not a voice")
        r = add(d, "later", clip(hz=NEW_HZ))  # the damaged file is replaced
        assert r.status_code == 201, r.text
        with d.http_client() as c:
            assert c.delete("/v1/voices/hand").status_code == 200
        assert "hand.voice" not in stored(store)

        (store / "vanish.voice").unlink()
        damage.renamed(store / "keep.voice", "appear")
        (store / "appearbad.voice").write_bytes(b"\x00 not a voice")
        audio, rate = say(d, "vanish")  # its print is held until a reload
        assert pitch(audio, rate) == pytest.approx(HZ["good"], abs=TOLERANCE_HZ)
        sighup(d)
        v = listed(d)
        assert sorted(v) == ["appear", "appearbad", "keep", "later"]
        assert v["appear"]["available"] and not v["appearbad"]["available"]
        audio, rate = say(d, "appear")
        assert pitch(audio, rate) == pytest.approx(HZ["good"], abs=TOLERANCE_HZ)
        with pytest.raises(openai.BadRequestError, match="found 'vanish'"):
            say(d, "vanish")
        assert "cloned voice 'vanish': its file is gone" in d.stderr()


def test_unreadable_files_and_a_read_only_store(test_voice, tmp_path: Path):
    """Run under the file modes (root without its override): an unreadable
    file is listed, refused, deleted and replaced; a store the service may not
    write still serves its voices and refuses new ones before any NPU work."""
    voice, store = cloner(test_voice, tmp_path), tmp_path / "store"
    cfg = sections(store)
    with serving(tmp_path / "a", voice, **cfg) as d:
        for name in ("ok", "locked", "gone"):
            assert add(d, name, clip(hz=HZ["good"])).status_code == 201
    for name in ("locked", "gone"):
        (store / f"{name}.voice").chmod(0)
    d = start_daemon(tmp_path / "b", voice, wrap=damage.as_user(), **cfg)
    try:
        v = listed(d)
        for name in ("locked", "gone"):
            why = f"damaged: {name}.voice: cannot be read (Permission denied)"
            assert v[name]["reason"].startswith(why), v[name]
        with pytest.raises(openai.ConflictError, match="'locked' is damaged"):
            say(d, "locked")
        with d.http_client() as c:
            assert c.delete("/v1/voices/gone").status_code == 200
        assert add(d, "locked", clip(hz=NEW_HZ)).status_code == 201
        audio, rate = say(d, "locked")
        assert pitch(audio, rate) == pytest.approx(NEW_HZ, abs=TOLERANCE_HZ)
    finally:
        assert d.stop() == 0, d.stderr()
    assert stored(store) == ["locked.voice", "ok.voice"]

    (store / ".ok.voice.tmp-1-0").write_bytes(b"half")  # an unfinished write
    store.chmod(0o555)
    d = start_daemon(tmp_path / "c", voice, wrap=damage.as_user(), **cfg)
    try:
        assert offered(d) == {"cloner", "ok", "locked"}
        audio, rate = say(d, "ok")
        assert pitch(audio, rate) == pytest.approx(HZ["good"], abs=TOLERANCE_HZ)
        calls = d.metrics()["hexvoice_graph_calls_total"]
        r = add(d, "new")
        assert r.status_code == 503, r.text
        msg = r.json()["error"]["message"]
        assert msg == (
            f"voice store {store} is not writable by the service: cloned voices "
            "cannot be added"
        )
        assert d.metrics()["hexvoice_graph_calls_total"] == calls  # no clone ran
        with d.http_client() as c:
            r = c.delete("/v1/voices/ok")
        assert r.status_code == 503, r.text
        assert "cannot remove ok.voice (Permission denied)" in r.text
    finally:
        store.chmod(0o755)
        assert d.stop() == 0, d.stderr()
    assert "Traceback" not in d.stderr(), d.stderr()
