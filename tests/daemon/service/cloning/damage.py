"""What happens to voice files on a real disk, done to a stored file: cut
short, one bit flipped inside an array or the checksum, rewritten in the format
before checksums, renamed; and the prefix that makes root obey file modes."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec

from daemon.sdk.cloning import VoicePrint
from daemon.service.cloning import voicefile
from daemon.service.cloning.voicefile import Entry

#: Root reads and writes every file whatever its mode: without these
#: capabilities it obeys the modes, as the service's own user does.
NO_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def as_user() -> list[str]:
    """The prefix that runs a command under the file modes (nothing for a user
    who is not root)."""
    return NO_OVERRIDE if os.geteuid() == 0 else []


def flipped(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0x01
    return bytes(out)


def read(path: Path) -> Entry:
    return voicefile.decode(path.read_bytes(), path.name)


def cut(path: Path, keep: int = -7) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def flip_array(path: Path, key: str) -> None:
    """One bit of array ``key``'s data (its last byte: a float32's exponent),
    so the payload still decodes, as a worn sector or a stray write leaves it."""
    data = path.read_bytes()
    at = data.index(read(path).print.arrays[key].tobytes())
    path.write_bytes(flipped(data, at + 3))


def flip_checksum(path: Path) -> None:
    path.write_bytes(flipped(path.read_bytes(), len(voicefile.MAGIC)))


def payload(data: bytes) -> dict[str, Any]:
    return msgspec.msgpack.decode(data[voicefile.HEADER_BYTES :])


def legacy(data: bytes, **changes: Any) -> bytes:
    """A format-2 file's voice as format 1 wrote it (no header, no checksum)."""
    return msgspec.msgpack.encode(dict(payload(data), format=1, **changes))


def to_legacy(path: Path) -> None:
    path.write_bytes(legacy(path.read_bytes()))


def renamed(path: Path, name: str) -> Path:
    """A copy of ``path``'s voice under ``name``, beside it (checksummed)."""
    out = path.with_name(f"{name}{voicefile.SUFFIX}")
    out.write_bytes(voicefile.encode(replace(read(path), name=name)))
    return out


def remodel(path: Path, model: str) -> None:
    """The voice as another encoder would have made it (a valid file)."""
    e = read(path)
    vp = VoicePrint(e.print.engine_id, model, e.print.arrays, e.print.meta)
    path.write_bytes(voicefile.encode(replace(e, print=vp)))
