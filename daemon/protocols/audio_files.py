"""Uploaded audio files: bytes → float32 ``[n, channels]`` blocks, checked first.

Files are read by libsndfile (``soundfile``): WAV, FLAC, OGG (Vorbis, Opus), MP3
and whatever else the installed build reads.  A file is refused, with the
multipart field ``file`` named, before any of it reaches an engine:

1. ``read_header`` (no samples decoded): bytes that are no audio file, a WAV
   whose ``data`` chunk is cut short, a file announcing no samples, and audio
   longer than the caller's cap, told from the header alone, so a 2 h file is
   refused without decoding 2 h;
2. the caller checks the header's rate and channels (``requests.check``);
3. ``scan`` decodes the whole file once: NaN or infinite samples, a compressed
   stream that breaks off (FLAC "lost sync"), or no sample at all.

Only then does ``blocks`` decode it again, block by block, for the engine.  The
second decode costs far less than transcribing (5 min of 16 kHz FLAC: 0.12 s),
and it keeps a bad file from ever opening a session (an engine runs one
session at a time; the others wait for it).  Every function
here blocks; the service calls them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np

from daemon.service.edge.refusals import BadRequest, Found, refuse
from daemon.service.edge.requests import check_duration

#: The request field the file arrives in (OpenAI's multipart ``file``).
FIELD: Final = "file"
#: Where a transcription request's audio fields come from: the file's header.
FIELDS: Final = {
    "sample_rate": f"{FIELD}.sample_rate",
    "channels": f"{FIELD}.channels",
    "audio": FIELD,
}
#: Decoded per block: long enough to make few calls, short enough that a long
#: file reaches the engine's encoder windows while it is still being decoded.
BLOCK_S: Final = 1.0
#: RIFF: a chunk header is a 4-byte id and a 4-byte little-endian size.
_CHUNK_HEADER: Final = 8
#: RIFF sizes a streaming writer leaves unset (our own streamed WAV uses the
#: second, ``encoders.WAV_UNKNOWN_SIZE``): the length is "until the end".
_UNKNOWN_SIZES: Final = (0, 0xFFFFFFFF)
#: WAVEFORMATEX: nAvgBytesPerSec sits 8 bytes into the ``fmt `` chunk (mmreg.h).
_AVG_BYTES_OFFSET: Final = 8


class BadAudio(BadRequest):
    """The file is audio libsndfile reads, but its samples are unusable."""

    code = "invalid_audio"


class NotAudio(BadRequest):
    """The bytes are no audio file libsndfile reads."""

    code = "unsupported_format"


@dataclass(frozen=True)
class AudioFile:
    """A file's header facts (``frames``: what the header announces until
    ``scan`` counted the decoded samples)."""

    data: bytes = field(repr=False)
    format: str  # libsndfile's major format: WAV, FLAC, OGG, ...
    subtype: str  # PCM_16, FLOAT, VORBIS, ...
    sample_rate: int
    channels: int
    frames: int

    @property
    def seconds(self) -> float:
        return self.frames / self.sample_rate

    @property
    def kind(self) -> str:
        """How the file is described in messages: ``WAV (PCM_16)``."""
        return f"{self.format} ({self.subtype})"


def read_header(data: bytes, max_seconds: float) -> AudioFile:
    """The header of ``data``; refuses non-audio, a truncated WAV, a file
    announcing 0 samples or more than ``max_seconds`` (``BadRequest``)."""
    import soundfile as sf

    if not data:
        raise refuse(NotAudio, FIELD, "an audio file", Found("an empty file"))
    try:
        with sf.SoundFile(io.BytesIO(data)) as f:
            audio = AudioFile(
                data, f.format, f.subtype, f.samplerate, f.channels, f.frames
            )
    except sf.SoundFileError as exc:
        why = str(exc).rpartition(": ")[2]  # "Error opening <BytesIO ...>: why"
        found = Found(f"{len(data)} bytes it cannot read ({why.rstrip('.')})")
        raise refuse(NotAudio, FIELD, _READABLE, found) from None
    declared = _wav_declared(data)  # libsndfile shrinks a cut WAV silently
    if declared is not None:
        announced_s, missing = declared
        check_duration(announced_s, max_seconds)
        if missing > 0:
            found = Found(f"a {audio.kind} file {missing} bytes short of its header")
            raise refuse(BadAudio, FIELD, "a complete audio file", found)
    check_duration(audio.seconds, max_seconds)
    if audio.frames == 0:
        found = Found(f"a {audio.kind} file with 0 samples")
        raise refuse(BadAudio, FIELD, "audio samples", found)
    return audio


def scan(audio: AudioFile, max_seconds: float) -> AudioFile:
    """``audio`` decoded once: refuses NaN/infinite samples, a stream that
    breaks off, no samples, and more than ``max_seconds`` (a header may
    understate the length); returns it with ``frames`` as decoded."""
    import soundfile as sf

    frames = 0
    try:
        for block in blocks(audio):
            bad = ~np.isfinite(block)
            if bad.any():
                n, ch = (int(i) for i in np.argwhere(bad)[0])
                at = (frames + n) / audio.sample_rate
                what = "NaN" if np.isnan(block[n, ch]) else "an infinite sample"
                found = Found(f"{what} at {at:.3f} s (channel {ch})")
                raise refuse(BadAudio, FIELD, "finite samples", found)
            frames += len(block)
            check_duration(frames / audio.sample_rate, max_seconds)
    except sf.SoundFileError as exc:  # FLAC "lost sync", a damaged Ogg page
        why = str(exc).removeprefix("Error : ").rstrip(".")
        found = Found(f"a {audio.kind} stream that breaks off ({why})")
        raise refuse(BadAudio, FIELD, "a complete audio file", found) from None
    if frames == 0:
        found = Found(f"a {audio.kind} file with 0 samples")
        raise refuse(BadAudio, FIELD, "audio samples", found)
    return replace(audio, frames=frames)


def blocks(audio: AudioFile, seconds: float = BLOCK_S) -> Iterator[np.ndarray]:
    """The samples as float32 ``[n, channels]`` blocks of ``seconds`` (the
    last one shorter); libsndfile scales integer PCM to [-1, 1)."""
    import soundfile as sf

    size = max(1, round(seconds * audio.sample_rate))
    with sf.SoundFile(io.BytesIO(audio.data)) as f:
        while True:
            block = f.read(size, dtype="float32", always_2d=True)
            if not len(block):
                return
            yield block


#: What ``file`` must be, in a refusal.
_READABLE: Final = "an audio file (WAV, FLAC, OGG, MP3)"


def _wav_declared(data: bytes) -> tuple[float, int] | None:
    """A RIFF WAVE file's (announced seconds, bytes missing from its ``data``
    chunk); None for other files and for WAVs streamed with unset sizes."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    byte_rate = 0
    pos = 12
    while pos + _CHUNK_HEADER <= len(data):
        chunk, size = data[pos : pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = pos + _CHUNK_HEADER
        if chunk == b"fmt " and body + _AVG_BYTES_OFFSET + 4 <= len(data):
            byte_rate = struct.unpack_from("<I", data, body + _AVG_BYTES_OFFSET)[0]
        if chunk == b"data":
            if size in _UNKNOWN_SIZES or not byte_rate:
                return None
            return size / byte_rate, size - (len(data) - body)
        pos = body + size + (size & 1)  # chunks are padded to even sizes
    return None
