"""Cloned voices on disk: one small file per voice (voicefile.py), written
atomically, each read back whole or reported damaged.

The directory is ``voice_store.dir`` (default ``/var/lib/hexvoice/voices``,
under the unit's ``StateDirectory=hexvoice``, which ``ProtectSystem=strict``
leaves writable; systemd/hexvoice.tmpfiles creates it).  Voice bundles may live
in the same directory: the store only reads files ``NAME.voice`` and leaves
everything else alone.

Writes go to a hidden temporary file in the same directory, are fsynced, and
are linked to their name (which fails if the name exists: never a silent
replace, unless the caller replaces a damaged file on purpose), then the
directory is fsynced; a crash leaves either no voice or the whole one.  A
``NAME.voice`` that does not read back (cut short, changed, another format,
unreadable) is ``Damaged``: it never stops the service, and its name stays
listed, removable and replaceable rather than silently taken.
Every function here blocks (the service calls them in a thread).
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Protocol

from daemon.config.reader import ReadError
from daemon.service.cloning.voicefile import SUFFIX, Entry, decode, encode, valid_name
from daemon.service.config import VoiceStoreConfig

_LOGGER = logging.getLogger(__name__)
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
class Damaged:
    """A ``NAME.voice`` that does not read back as a voice."""

    name: str
    #: what is wrong, starting with the file's name (no directory: clients see it)
    reason: str
    bytes: int


@dataclass
class Scan:
    """What the directory holds: the voices that read back, and the others."""

    entries: dict[str, Entry] = field(default_factory=dict)
    damaged: dict[str, Damaged] = field(default_factory=dict)


class Sized(Protocol):
    @property
    def bytes(self) -> int: ...


class VoiceStore:
    """The voice files of one directory, and the caps on them."""

    def __init__(self, cfg: VoiceStoreConfig) -> None:
        self.dir = Path(cfg.dir).absolute()
        self.max_count, self.max_bytes = cfg.max_count, cfg.max_bytes

    def path(self, name: str) -> Path:
        return self.dir / f"{name}{SUFFIX}"

    def load(self) -> Scan:
        """Every voice file, read (the directory is made if missing, not its
        parent); temporary files of an interrupted write are removed where the
        store can be written."""
        self.dir.mkdir(exist_ok=True)  # its parent: the state directory, not ours
        scan = Scan()
        for p in sorted(self.dir.iterdir()):
            if p.name.startswith(".") and _TMP in p.name:
                try:
                    p.unlink(missing_ok=True)  # a write that never finished
                except OSError as exc:  # a read-only store: its voices still serve
                    _LOGGER.warning("voice store: cannot remove %s: %s", p, exc)
                continue
            if p.suffix != SUFFIX or (p.is_dir() and not p.is_symlink()):
                continue  # a bundle directory, a note: not ours
            if not valid_name(p.stem):  # no request could name it
                _LOGGER.warning("voice store: skipped %s: not a voice name", p)
                continue
            found = self.read(p.stem)
            if isinstance(found, Entry):
                scan.entries[found.name] = found
            elif found is not None:  # None: gone since the listing
                scan.damaged[found.name] = found
        return scan

    def read(self, name: str) -> Entry | Damaged | None:
        """The voice stored as ``name``, or what is wrong with its file; None
        when there is no such file (or a directory of that name: not ours)."""
        p = self.path(name)
        try:
            # O_NONBLOCK: a FIFO of that name must not hang the service.
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            if not p.is_symlink():
                return None
            return Damaged(name, f"{p.name}: a link to a file that does not exist", 0)
        except OSError as exc:
            return Damaged(name, f"{p.name}: cannot be read ({_why(exc)})", _size(p))
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            if stat.S_ISDIR(st.st_mode) and not p.is_symlink():
                return None
            return Damaged(name, f"{p.name}: not a regular file", 0)
        with os.fdopen(fd, "rb") as f:
            if st.st_size > self.max_bytes:
                why = f"{st.st_size} bytes, more than voice_store.max_bytes"
                return Damaged(name, f"{p.name}: {why}", st.st_size)
            try:
                data = f.read()
            except OSError as exc:
                return Damaged(name, f"{p.name}: cannot be read ({_why(exc)})", 0)
        try:
            entry = decode(data, p.name)
        except ReadError as exc:
            return Damaged(name, str(exc), len(data))
        if entry.name != name:
            why = f"name: expected {name!r}, found {entry.name!r}"
            return Damaged(name, f"{p.name}: {why}", len(data))
        return entry

    def unwritable(self) -> str | None:
        """Why no voice can be added or removed now (None: they can)."""
        if os.access(self.dir, os.W_OK | os.X_OK):
            return None
        try:
            ro = bool(os.statvfs(self.dir).f_flag & os.ST_RDONLY)
        except OSError:
            ro = False
        how = (
            "is on a read-only file system" if ro else "is not writable by the service"
        )
        return f"voice store {self.dir} {how}"

    def add(
        self, entry: Entry, held: Mapping[str, Sized], overwrite: bool = False
    ) -> Entry:
        """Write ``entry`` (``held``: the files stored now, for the caps);
        returns it with its size on disk.  ``overwrite``: the caller replaces
        the file of that name on purpose (a damaged or stale one)."""
        data = encode(entry)
        others = {n: e for n, e in held.items() if not (overwrite and n == entry.name)}
        used = sum(e.bytes for e in others.values())
        if len(others) >= self.max_count:
            raise StoreFull(
                f"the voice store is full: {len(others)} of voice_store.max_count "
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
            if overwrite:
                os.replace(tmp, final)  # atomic: the old file or the new one
            else:
                _publish(tmp, final, entry.name)
        finally:
            tmp.unlink(missing_ok=True)
        self._sync_dir()
        return replace(entry, bytes=len(data), verified=True)

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


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _size(p: Path) -> int:
    try:
        return p.lstat().st_size
    except OSError:
        return 0


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
    if final.exists() or final.is_symlink():  # one process writes the store
        raise Exists(f"a voice named {name!r} is stored already")
    os.rename(tmp, final)
