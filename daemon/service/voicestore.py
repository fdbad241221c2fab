"""Cloned voices on disk: one small file per voice, written atomically, read by
the one typed reader.

The directory is ``voice_store.dir`` (default ``/var/lib/hexvoice/voices``,
under the unit's ``StateDirectory=hexvoice``, which ``ProtectSystem=strict``
leaves writable; systemd/hexvoice.tmpfiles creates it).  Voice bundles may live
in the same directory: the store only reads regular files ``NAME.voice`` and
leaves everything else alone.  A file is msgpack of ``StoredVoice``: the
``VoicePrint``'s arrays as (dtype, shape, bytes), its metadata, and what the
service needs to offer it (its engine's voice, the transcript, when it was
made).  No audio is kept.

Writes go to a hidden temporary file in the same directory, are fsynced, and
are linked to their name (which fails if the name exists: never a silent
replace), then the directory is fsynced; a crash leaves either no voice or the
whole one.  A file that does not read back (cut short, edited, another format)
is skipped with one log line naming it and why; it never stops the service.
Every function here blocks (the service calls them in a thread).
"""

from __future__ import annotations

import errno
import itertools
import logging
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Final, Literal

import msgspec
import numpy as np

from daemon.engine.cloning import DTYPES, Meta, VoicePrint
from daemon.engine.reader import ReadError, read

_LOGGER = logging.getLogger(__name__)
#: systemd/hexvoice.service StateDirectory=hexvoice, beside the voice bundles.
DEFAULT_DIR: Final = Path("/var/lib/hexvoice/voices")
#: A voice is a few KB (Qwen3-TTS: one x-vector, 4 KB at full size) to a few
#: hundred KB (GPT-SoVITS zero-shot: prompt phones, BERT features, tokens).
DEFAULT_MAX_COUNT: Final = 100
DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
SUFFIX: Final = ".voice"
#: Names: no path characters, no leading dot (hidden/temporary files), short.
NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
NAME_RULE: Final = (
    "a name of 1-64 letters, digits, '_', '.', '-', starting with a letter or digit"
)
FORMAT: Final = 1
_TMP: Final = ".tmp-"
_COUNTER = itertools.count()


class StoreError(Exception):
    """The store refuses a change (the message says why)."""


class StoreFull(StoreError):
    """``max_count`` or ``max_bytes`` would be exceeded."""


class Exists(StoreError):
    """A voice of that name is stored already."""


class Missing(StoreError):
    """No voice of that name is stored."""


@dataclass(frozen=True)
class VoiceStoreConfig:
    """``voice_store`` in config.yaml: where cloned voices live, and caps."""

    dir: Path = DEFAULT_DIR
    """Directory of the voice files (created if missing; its parent must exist)."""
    max_count: Annotated[int, msgspec.Meta(ge=0)] = DEFAULT_MAX_COUNT
    """Voices it holds at most; 0 turns cloning off."""
    max_bytes: Annotated[int, msgspec.Meta(gt=0)] = DEFAULT_MAX_BYTES
    """Bytes of voice files it holds at most."""


def valid_name(name: str) -> bool:
    return bool(NAME.match(name)) and not name.endswith(SUFFIX)


class StoredArray(msgspec.Struct, frozen=True):
    dtype: str  # one of cloning.DTYPES (checked by ``decode``)
    shape: list[Annotated[int, msgspec.Meta(ge=0)]]
    data: bytes


class StoredVoice(msgspec.Struct, frozen=True):
    """One file's content (format 1)."""

    format: Literal[1]
    name: Annotated[str, msgspec.Meta(pattern=NAME.pattern)]
    engine: str
    model: str
    #: the engine's own voice it was cloned with (it speaks through it)
    base: str
    created: float
    transcript: str | None
    meta: dict[str, Meta]
    arrays: dict[str, StoredArray]


@dataclass(frozen=True)
class Entry:
    """A stored voice as the service holds it."""

    name: str
    print: VoicePrint
    base: str
    created: float
    transcript: str | None
    bytes: int


def encode(e: Entry) -> bytes:
    vp = e.print
    arrays = {
        k: StoredArray(a.dtype.name, list(a.shape), np.ascontiguousarray(a).tobytes())
        for k, a in vp.arrays.items()
    }
    record = StoredVoice(
        FORMAT, e.name, vp.engine_id, vp.model, e.base, e.created, e.transcript,
        dict(vp.meta), arrays,
    )  # fmt: skip
    return msgspec.msgpack.encode(record)


def decode(data: bytes, where: str) -> Entry:
    """A file's bytes as an entry; ``ReadError`` says what is wrong."""
    try:
        raw = msgspec.msgpack.decode(data)
    except msgspec.DecodeError as exc:
        raise ReadError(f"{where}: not a voice file ({exc})") from None
    r = read(raw, StoredVoice, where=where)
    arrays = {}
    for key, a in r.arrays.items():
        if a.dtype not in DTYPES:
            raise ReadError(
                f"{where}: arrays.{key}.dtype: expected one of {sorted(DTYPES)}, "
                f"found {a.dtype!r}"
            )
        dtype = np.dtype(a.dtype)
        want = math.prod(a.shape) * dtype.itemsize
        if len(a.data) != want:
            raise ReadError(
                f"{where}: arrays.{key}: expected {want} bytes for {a.dtype} "
                f"{tuple(a.shape)}, found {len(a.data)}"
            )
        arrays[key] = np.frombuffer(a.data, dtype).reshape(a.shape)
    try:
        vp = VoicePrint(r.engine, r.model, arrays, r.meta)
    except ValueError as exc:
        raise ReadError(f"{where}: {exc}") from None
    return Entry(r.name, vp, r.base, r.created, r.transcript, len(data))


class VoiceStore:
    """The voice files of one directory, and the caps on them."""

    def __init__(self, cfg: VoiceStoreConfig) -> None:
        self.dir = Path(cfg.dir).absolute()
        self.max_count, self.max_bytes = cfg.max_count, cfg.max_bytes

    def path(self, name: str) -> Path:
        return self.dir / f"{name}{SUFFIX}"

    def load(self) -> dict[str, Entry]:
        """Every voice that reads back (the directory is made if missing, not
        its parent);
        temporary files of an interrupted write are removed."""
        self.dir.mkdir(exist_ok=True)  # its parent: the state directory, not ours
        found: dict[str, Entry] = {}
        for p in sorted(self.dir.iterdir()):
            if p.name.startswith(".") and _TMP in p.name:
                p.unlink(missing_ok=True)  # a write that never finished
                continue
            if p.suffix != SUFFIX or not p.is_file():
                continue  # a bundle directory, a note: not ours
            try:
                entry = self._read(p)
            except (OSError, ReadError) as exc:
                _LOGGER.warning("voice store: skipped %s", exc)  # names the file
                continue
            found[entry.name] = entry
        return found

    def _read(self, p: Path) -> Entry:
        size = p.stat().st_size
        if size > self.max_bytes:
            raise ReadError(f"{p}: {size} bytes, more than voice_store.max_bytes")
        entry = decode(p.read_bytes(), str(p))
        if self.path(entry.name) != p:
            raise ReadError(f"{p}: name: expected {p.stem!r}, found {entry.name!r}")
        return entry

    def add(self, entry: Entry, held: Mapping[str, Entry]) -> Entry:
        """Write ``entry`` (``held``: the voices stored now, for the caps);
        returns it with its size on disk."""
        data = encode(entry)
        used = sum(e.bytes for e in held.values())
        if len(held) >= self.max_count:
            raise StoreFull(
                f"the voice store is full: {len(held)} of voice_store.max_count "
                f"{self.max_count} voices (remove one first)"
            )
        if used + len(data) > self.max_bytes:
            raise StoreFull(
                f"the voice store is full: {used} + {len(data)} bytes is more than "
                f"voice_store.max_bytes {self.max_bytes} (remove a voice first)"
            )
        final = self.path(entry.name)
        tmp = self.dir / f".{entry.name}{SUFFIX}{_TMP}{os.getpid()}-{next(_COUNTER)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            _publish(tmp, final, entry.name)
        finally:
            tmp.unlink(missing_ok=True)
        self._sync_dir()
        return Entry(entry.name, entry.print, entry.base, entry.created,
                     entry.transcript, len(data))  # fmt: skip

    def remove(self, name: str) -> None:
        try:
            self.path(name).unlink()
        except FileNotFoundError:
            raise Missing(f"no voice named {name!r} is stored") from None
        self._sync_dir()

    def _sync_dir(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _publish(tmp: Path, final: Path, name: str) -> None:
    """``tmp`` under its final name, never replacing a file there."""
    try:
        os.link(tmp, final)  # atomic, and EEXIST if the name is taken
        return
    except FileExistsError:
        raise Exists(f"a voice named {name!r} is stored already") from None
    except OSError as exc:  # a file system without hard links (vfat, some FUSE)
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
    if final.exists():  # one process writes the store: no race after this check
        raise Exists(f"a voice named {name!r} is stored already")
    os.rename(tmp, final)
