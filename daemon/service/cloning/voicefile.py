"""One cloned voice's file: its bytes, checked end to end, as an ``Entry``.

A file is a header and a payload.  The header is ``MAGIC`` (which also says
the format: 2) and the sha256 of the payload; the payload is msgpack of
``StoredVoice``: the ``VoicePrint``'s arrays as (dtype, shape, bytes), its
metadata, and what the service needs to offer it (its engine's voice, the
transcript, the caller's consent statement, when it was made).  No audio is
kept.  The checksum catches what the typed reader cannot: a changed byte inside
an array still decodes, and would reach the engine as a print of garbage
(GPT-SoVITS: prompt tokens out of range, a client error on every request).

Files of format 1 (before checksums: the bare msgpack payload, no header) are
still read, as *unverified* (``Entry.verified`` False): the store keeps no
audio, so refusing them would throw away every voice registered before the
change, and the typed reader still catches a file cut short or mistyped.  They
are not rewritten with a checksum: one taken now would vouch for bytes that may
already be damaged.  Registering the voice again gives it one.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Annotated, Final, Literal

import msgspec
import numpy as np

from daemon.config.reader import ReadError, read
from daemon.sdk.cloning import DTYPES, Meta, VoicePrint

SUFFIX: Final = ".voice"
#: Names: no path characters, no leading dot (hidden/temporary files), short.
NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
NAME_RULE: Final = (
    "a name of 1-64 letters, digits, '_', '.', '-', starting with a letter or digit"
)
FORMAT: Final = 2
#: Format 1: the payload alone (files written before checksums).
UNCHECKED_FORMAT: Final = 1
#: A format-2 file's first bytes.  Never the start of a format-1 file: msgpack
#: of a record begins with a map marker (0x80-0x8f, 0xde, 0xdf), not 'H'.
MAGIC: Final = b"HXVOICE2"
#: sha256's digest size (FIPS 180-4): the header is MAGIC, then this many bytes.
DIGEST_BYTES: Final = hashlib.sha256().digest_size
HEADER_BYTES: Final = len(MAGIC) + DIGEST_BYTES


def valid_name(name: str) -> bool:
    return bool(NAME.match(name)) and not name.endswith(SUFFIX)


class StoredArray(msgspec.Struct, frozen=True):
    dtype: str  # one of cloning.DTYPES (checked by ``decode``)
    shape: list[Annotated[int, msgspec.Meta(ge=0)]]
    data: bytes


class StoredVoice(msgspec.Struct, frozen=True):
    """The payload (format 1's whole file)."""

    format: Literal[1, 2]
    name: Annotated[str, msgspec.Meta(pattern=NAME.pattern)]
    engine: str
    model: str
    #: the engine's own voice it was cloned with (it speaks through it)
    base: str
    created: float
    transcript: str | None
    meta: dict[str, Meta]
    arrays: dict[str, StoredArray]
    #: the caller's statement that the speaker consented (absent in files
    #: written before consent was asked for: they read back as None)
    consent: str | None = None


@dataclass(frozen=True)
class Entry:
    """A stored voice as the service holds it."""

    name: str
    print: VoicePrint
    base: str
    created: float
    transcript: str | None
    bytes: int
    #: its file carries a checksum that matched (False: format 1)
    verified: bool = True
    #: the caller's consent statement (None: none was given)
    consent: str | None = None


def encode(e: Entry) -> bytes:
    vp = e.print
    arrays = {
        k: StoredArray(a.dtype.name, list(a.shape), np.ascontiguousarray(a).tobytes())
        for k, a in vp.arrays.items()
    }
    record = StoredVoice(
        FORMAT,
        e.name,
        vp.engine_id,
        vp.model,
        e.base,
        e.created,
        e.transcript,
        dict(vp.meta),
        arrays,
        e.consent,
    )
    payload = msgspec.msgpack.encode(record)
    return MAGIC + hashlib.sha256(payload).digest() + payload


def decode(data: bytes, where: str) -> Entry:
    """A file's bytes as an entry; ``ReadError`` says what is wrong."""
    verified = data.startswith(MAGIC)
    payload = _checked(data, where) if verified else data
    try:
        raw = msgspec.msgpack.decode(payload)
    except msgspec.DecodeError as exc:
        raise ReadError(f"{where}: not a voice file ({exc})") from None
    r = read(raw, StoredVoice, where=where)
    want_format = FORMAT if verified else UNCHECKED_FORMAT
    if r.format != want_format:
        raise ReadError(
            f"{where}: format: expected {want_format} in a file "
            f"{'with' if verified else 'without'} a checksum header, found {r.format}"
        )
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
    return Entry(
        r.name, vp, r.base, r.created, r.transcript, len(data), verified, r.consent
    )


def _checked(data: bytes, where: str) -> bytes:
    """The payload of a format-2 file, once its checksum matched."""
    if len(data) < HEADER_BYTES:
        raise ReadError(
            f"{where}: cut short: {len(data)} bytes, less than its "
            f"{HEADER_BYTES}-byte header"
        )
    payload = data[HEADER_BYTES:]
    if hashlib.sha256(payload).digest() == data[len(MAGIC) : HEADER_BYTES]:
        return payload
    try:
        msgspec.msgpack.decode(payload)
        how = "changed since it was written"
    except msgspec.DecodeError as exc:
        short = "truncated" in str(exc)
        how = "cut short" if short else "changed since it was written"
    raise ReadError(f"{where}: checksum mismatch: its content was {how}")
