"""The voice store's files: atomic, typed on load, capped, named safely."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import msgspec
import numpy as np
import pytest

from daemon.engine.cloning import VoicePrint
from daemon.service import voicestore
from daemon.service.voicestore import (
    Entry,
    Exists,
    Missing,
    StoreFull,
    VoiceStore,
    VoiceStoreConfig,
)


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
    assert store.load() == {}  # made the directory
    stored = store.add(_entry(), {})
    assert stored.bytes == (tmp_path / "voices" / "anna.voice").stat().st_size > 64
    again = _store(tmp_path).load()  # a new process reading the same directory
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
    assert store.load()["anna"].bytes == first.bytes
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
    assert store.load() == {}
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
    assert voicestore.valid_name(name) is ok


def _corrupt(d: Path) -> dict[str, bytes]:
    good = msgspec.msgpack.decode(voicestore.encode(_entry("x")))
    short = dict(good, arrays={"xvector": dict(good["arrays"]["xvector"], data=b"1")})
    return {
        "cut.voice": voicestore.encode(_entry("cut"))[:-7],
        "junk.voice": b"\x00not msgpack at all",
        "typed.voice": msgspec.msgpack.encode(dict(good, name="typed", created="x")),
        "short.voice": msgspec.msgpack.encode(dict(short, name="short")),
        "renamed.voice": voicestore.encode(_entry("other")),
        "newer.voice": msgspec.msgpack.encode(dict(good, name="newer", format=2)),
        "dtype.voice": msgspec.msgpack.encode(
            dict(
                good,
                name="dtype",
                arrays={"a": {"dtype": "object", "shape": [1], "data": b"12345678"}},
            )
        ),  # fmt: skip
    }


def test_corrupt_files_are_skipped_with_a_clear_log(tmp_path: Path, caplog):
    store = _store(tmp_path)
    store.load()
    store.add(_entry(), {})
    d = tmp_path / "voices"
    for name, data in _corrupt(d).items():
        (d / name).write_bytes(data)
    (d / "en_US-joe-medium").mkdir()  # a bundle beside them: not ours
    (d / "README").write_text("notes")
    (d / ".anna.voice.tmp-1-0").write_bytes(b"half")  # an interrupted write
    with caplog.at_level(logging.WARNING):
        found = store.load()
    assert list(found) == ["anna"]
    log = caplog.text
    assert log.count("voice store: skipped") == 7, log
    assert log.count(str(d)) == 7, log  # each line names its file once
    for why in (
        "cut.voice: not a voice file",
        "junk.voice: not a voice file",
        "typed.voice: created: expected a number, found 'x'",
        "short.voice: arrays.xvector: expected 32 bytes for float32 (8,), found 1",
        "renamed.voice: name: expected 'renamed', found 'other'",
        "newer.voice: format: expected one of [1], found 2",
        "dtype.voice: arrays.a.dtype: expected one of",
    ):
        assert why in log, (why, log)
    assert not (d / ".anna.voice.tmp-1-0").exists()
    assert (d / "en_US-joe-medium").is_dir() and (d / "README").exists()
