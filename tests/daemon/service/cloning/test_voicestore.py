"""The voice store's files: atomic, checksummed, read back whole or named as damaged,
capped, named safely."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import msgspec
import numpy as np
import pytest

from daemon.sdk.cloning import VoicePrint
from daemon.service.cloning import voicefile
from daemon.service.cloning.voicefile import Entry
from daemon.service.cloning.voicestore import Exists, Missing, StoreFull, VoiceStore
from daemon.service.config import VoiceStoreConfig
from tests.daemon.service.cloning import damage


def _entry(name: str = "anna", n: int = 8) -> Entry:
    vp = VoicePrint(
        "qwen3-tts",
        "f" * 64,
        {
            "xvector": np.linspace(-1, 1, n, dtype=np.float32),
            "ids": np.arange(6, dtype=np.int64).reshape(2, 3),
        },
        {"seconds": 4.25, "rate": 24000, "clip": "ref.wav"},
    )
    return Entry(name, vp, "base-voice", 1_700_000_000.5, "hello there", 0)


def _store(tmp_path: Path, **kw) -> VoiceStore:
    return VoiceStore(VoiceStoreConfig(dir=tmp_path / "voices", **kw))


def test_a_voice_reads_back_as_written_after_a_restart(tmp_path: Path):
    store = _store(tmp_path)
    assert store.load().entries == {}  # made the directory
    stored = store.add(_entry(), {})
    assert stored.bytes == (tmp_path / "voices" / "anna.voice").stat().st_size > 64
    again = _store(tmp_path).load().entries  # a new process reading the same directory
    (e,) = again.values()
    assert (e.name, e.base, e.created, e.transcript, e.bytes) == (
        "anna", "base-voice", 1_700_000_000.5, "hello there", stored.bytes
    )  # fmt: skip
    want = _entry().print
    assert (e.print.engine_id, e.print.model, dict(e.print.meta)) == (
        want.engine_id, want.model, dict(want.meta)
    )  # fmt: skip
    for key, a in want.arrays.items():
        got = e.print.arrays[key]
        assert got.dtype == a.dtype and got.shape == a.shape
        np.testing.assert_array_equal(got, a)
    assert os.stat(tmp_path / "voices" / "anna.voice").st_mode & 0o777 == 0o640


def test_the_directory_parent_is_not_created(tmp_path: Path):
    store = VoiceStore(VoiceStoreConfig(dir=tmp_path / "no" / "voices"))
    with pytest.raises(FileNotFoundError):
        store.load()
    assert not (tmp_path / "no").exists()


def test_a_name_is_never_replaced(tmp_path: Path):
    store = _store(tmp_path)
    store.load()
    first = store.add(_entry(), {})
    with pytest.raises(Exists, match="'anna' is stored already"):
        store.add(_entry(n=16), {})  # even when the caller did not know
    assert store.load().entries["anna"].bytes == first.bytes
    assert sorted(p.name for p in (tmp_path / "voices").iterdir()) == ["anna.voice"]


def test_caps_count_and_bytes(tmp_path: Path):
    store = _store(tmp_path, max_count=2)
    store.load()
    held = {n: store.add(_entry(n), {}) for n in ("a", "b")}
    with pytest.raises(StoreFull, match="2 of voice_store.max_count 2"):
        store.add(_entry("c"), held)
    one = held["a"].bytes
    small = _store(tmp_path, max_bytes=2 * one + 10)
    with pytest.raises(StoreFull, match="max_bytes"):
        small.add(_entry("c"), held)
    assert not (tmp_path / "voices" / "c.voice").exists()


def test_remove(tmp_path: Path):
    store = _store(tmp_path)
    store.load()
    store.add(_entry(), {})
    store.remove("anna")
    assert store.load().entries == {}
    with pytest.raises(Missing, match="no voice named 'anna'"):
        store.remove("anna")


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("anna", True),
        ("Anna_2.v-1", True),
        ("a" * 64, True),
        ("a" * 65, False),
        ("../x", False),
        ("a/b", False),
        (".hidden", False),
        ("-x", False),
        ("", False),
        ("x y", False),
        ("名字", False),
        ("x.voice", False),
        ("a\x00b", False),
    ],
)
def test_names(name: str, ok: bool):
    assert voicefile.valid_name(name) is ok


def legacy(e: Entry) -> bytes:
    """``e`` as a file of format 1 (before checksums: the payload alone)."""
    return damage.legacy(voicefile.encode(e))


def raw(record: dict) -> bytes:
    return msgspec.msgpack.encode(record)


def checked(record: dict) -> bytes:
    """``record`` with a checksum header that matches it."""
    body = raw(record)
    return voicefile.MAGIC + hashlib.sha256(body).digest() + body


def _damaged() -> dict[str, tuple[bytes, str]]:
    """Files that do not read back, and what the store says of each."""
    good = damage.payload(voicefile.encode(_entry("x")))
    short = dict(good, arrays={"xvector": dict(good["arrays"]["xvector"], data=b"1")})
    whole = voicefile.encode(_entry("flip"))
    # A byte of the x-vector's data: the payload still decodes after the flip.
    inside = whole.index(np.linspace(-1, 1, 8, dtype=np.float32).tobytes()) + 5
    bad_sum = damage.flipped(voicefile.encode(_entry("sum")), len(voicefile.MAGIC))
    changed = "checksum mismatch: its content was changed since it was written"
    obj = {"a": {"dtype": "object", "shape": [1], "data": b"12345678"}}
    return {
        "cut": (whole[:-7], "checksum mismatch: its content was cut short"),
        "flip": (damage.flipped(whole, inside), changed),
        "sum": (bad_sum, changed),
        "header": (voicefile.MAGIC + b"12", "cut short: 10 bytes, less than its"),
        "model": (
            checked(dict(good, name="model", model="")),
            "VoicePrint.model: expected a non-empty string",
        ),
        "junk": (b"\x00not msgpack at all", "not a voice file"),
        "oldcut": (legacy(_entry("oldcut"))[:-7], "not a voice file"),
        "typed": (raw(dict(good, name="typed", format=1, created="x")),
                  "created: expected a number, found 'x'"),
        "short": (raw(dict(short, name="short", format=1)),
                  "arrays.xvector: expected 32 bytes for float32 (8,), found 1"),
        "renamed": (voicefile.encode(_entry("other")),
                    "name: expected 'renamed', found 'other'"),
        "newer": (raw(dict(good, name="newer", format=3)),
                  "format: expected one of [1, 2], found 3"),
        "bare": (raw(dict(good, name="bare")),
                 "format: expected 1 in a file without a checksum header, found 2"),
        "dtype": (raw(dict(good, name="dtype", format=1, arrays=obj)),
                  "arrays.a.dtype: expected one of"),
    }  # fmt: skip


def test_damaged_files_are_reported_by_name(tmp_path: Path, caplog):
    """Each file that does not read back is named with what is wrong (the
    file's name, not its directory: clients are shown it), never dropped in
    silence, and never stops the others from loading."""
    store = _store(tmp_path)
    store.load()
    store.add(_entry(), {})
    d = tmp_path / "voices"
    cases = _damaged()
    for name, (data, _) in cases.items():
        (d / f"{name}.voice").write_bytes(data)
    (d / "link.voice").symlink_to(d / "nowhere")
    os.mkfifo(d / "fifo.voice")  # must not hang the scan
    (d / "a b.voice").write_bytes(b"x")  # no request could name it
    (d / "en_US-joe-medium").mkdir()  # a bundle beside them: not ours
    (d / "dir.voice").mkdir()
    (d / "README").write_text("notes")
    (d / ".anna.voice.tmp-1-0").write_bytes(b"half")  # an interrupted write
    with caplog.at_level(logging.WARNING):
        scan = store.load()
    assert list(scan.entries) == ["anna"]
    want = {n: f"{n}.voice: {why}" for n, (_, why) in cases.items()}
    want["link"] = "link.voice: a link to a file that does not exist"
    want["fifo"] = "fifo.voice: not a regular file"
    assert sorted(scan.damaged) == sorted(want)
    for name, d_ in scan.damaged.items():
        assert d_.reason.startswith(want[name]), (name, d_.reason)
        assert str(d) not in d_.reason
    assert scan.damaged["cut"].bytes == len(cases["cut"][0])
    assert f"skipped {d / 'a b.voice'}: not a voice name" in caplog.text
    assert not (d / ".anna.voice.tmp-1-0").exists()
    assert (d / "en_US-joe-medium").is_dir() and (d / "README").exists()


def test_a_file_past_max_bytes_is_damaged_unread(tmp_path: Path):
    store = _store(tmp_path)
    store.load()
    store.add(_entry(), {})
    small = _store(tmp_path, max_bytes=100)
    (found,) = small.load().damaged.values()
    assert "anna.voice: " in found.reason and "more than voice_store.max_bytes" in (
        found.reason
    )


def test_files_before_checksums_read_as_unverified(tmp_path: Path):
    store = _store(tmp_path)
    store.load()
    (tmp_path / "voices" / "old.voice").write_bytes(legacy(_entry("old")))
    (e,) = store.load().entries.values()
    assert (e.name, e.verified, e.transcript) == ("old", False, "hello there")
    np.testing.assert_array_equal(e.print.arrays["ids"], _entry().print.arrays["ids"])
    fresh = store.add(_entry("new"), {})
    assert fresh.verified and store.load().entries["new"].verified


def test_read_names_one_file(tmp_path: Path):
    store = _store(tmp_path)
    store.load()
    assert store.read("ghost") is None  # gone between a listing and its read
    (tmp_path / "voices" / "bundle.voice").mkdir()
    assert store.read("bundle") is None  # a directory: not ours
    store.add(_entry(), {})
    assert isinstance(store.read("anna"), Entry)


def test_a_damaged_file_is_replaced_only_on_purpose(tmp_path: Path):
    store = _store(tmp_path, max_count=1)
    store.load()
    path = tmp_path / "voices" / "anna.voice"
    path.write_bytes(b"\x00junk")
    held = store.load().damaged
    with pytest.raises(Exists):
        store.add(_entry(), {})  # a caller that did not mean to
    # It leaves the count, as its file is the one replaced.
    stored = store.add(_entry(), held, overwrite=True)
    assert store.load().entries["anna"].bytes == stored.bytes == path.stat().st_size
    assert sorted(p.name for p in path.parent.iterdir()) == ["anna.voice"]


def _scan_as_user(d: Path) -> dict:
    code = (
        "import json, sys; from pathlib import Path; "
        "from daemon.service.cloning.voicestore import VoiceStore; "
        "from daemon.service.config import VoiceStoreConfig; "
        "s = VoiceStore(VoiceStoreConfig(dir=Path(sys.argv[1]))); scan = s.load(); "
        "print(json.dumps({'entries': sorted(scan.entries), 'damaged': "
        "{n: x.reason for n, x in scan.damaged.items()}, "
        "'unwritable': s.unwritable()}))"
    )
    p = subprocess.run(
        [*damage.as_user(), sys.executable, "-c", code, str(d)],
        capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[4],
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_unreadable_files_and_a_read_only_store(tmp_path: Path):
    """A file the service may not read is damaged, not fatal; a store it may
    not write still serves its voices (an unfinished write left in it stays)
    and says it cannot take new ones."""
    store = _store(tmp_path)
    store.load()
    store.add(_entry(), {})
    d = tmp_path / "voices"
    store.add(_entry("locked"), {})
    (d / "locked.voice").chmod(0)
    got = _scan_as_user(d)
    assert got["entries"] == ["anna"] and got["unwritable"] is None
    assert got["damaged"] == {
        "locked": "locked.voice: cannot be read (Permission denied)"
    }
    (d / ".anna.voice.tmp-1-0").write_bytes(b"half")
    d.chmod(0o555)
    try:
        got = _scan_as_user(d)
    finally:
        d.chmod(0o755)
    assert got["entries"] == ["anna"], got
    assert got["unwritable"] == f"voice store {d} is not writable by the service"
    assert (d / ".anna.voice.tmp-1-0").exists()


def test_consent_reads_back_and_older_files_have_none(tmp_path: Path):
    """The consent statement is part of the checksummed payload; a format-2
    file written before consent was asked for (no such field) still reads, as
    a voice without one."""
    given = replace(_entry(), consent="she agreed")
    data = voicefile.encode(given)
    assert voicefile.decode(data, "anna.voice").consent == "she agreed"
    payload = msgspec.msgpack.decode(data[voicefile.HEADER_BYTES :])
    del payload["consent"]
    older = msgspec.msgpack.encode(payload)
    old = voicefile.MAGIC + hashlib.sha256(older).digest() + older
    e = voicefile.decode(old, "anna.voice")
    assert e.consent is None and e.verified and e.transcript == "hello there"
