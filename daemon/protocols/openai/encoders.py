"""Response audio formats of the HTTP API (OpenAI ``response_format``).

``wav`` and ``pcm`` stream: a WAV header with unknown sizes, then int16 PCM as the
engine yields it; asked not to stream, they are one file whose WAV header carries
the real sizes.  ``flac``, ``mp3`` and ``opus`` (Ogg) are encoded by libsndfile
(the ``soundfile`` runtime dependency) once the audio is complete, because their
headers carry the final length (FLAC STREAMINFO, the MP3 Xing/LAME frame) and
decoders mis-read them when it is missing; they are offered only where the
installed libsndfile has the encoder.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np

from daemon.sdk.audio.resample import Resampler
from daemon.sdk.audio.shaping import output_resampler, to_int16

#: OpenAI: ``pcm`` is raw 24 kHz 16-bit signed little-endian mono (docs/clients.md).
OPENAI_PCM_RATE: Final = 24000
SAMPLE_WIDTH: Final = 2  # int16
CHANNELS: Final = 1
#: Streamed WAV: RIFF and data sizes unknown -> 0xFFFFFFFF (docs/clients.md, speech
#: response; a size of 0 is read as "no audio" by some clients).
WAV_UNKNOWN_SIZE: Final = 0xFFFFFFFF
_WAVE_FORMAT_PCM: Final = 1  # mmreg.h
_FMT_CHUNK_SIZE: Final = 16
_WAV_HEADER_BYTES: Final = 44  # RIFF 12 + fmt 8+16 + data 8
#: Opus codes only these rates (RFC 6716 §2); 24 kHz keeps speech intact.
OPUS_RATES: Final = (8000, 12000, 16000, 24000, 48000)
#: Rates an MPEG-1/2 layer III stream can carry.
MP3_RATES: Final = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)


@dataclass(frozen=True)
class AudioFormat:
    name: str
    content_type: str
    streams: bool
    sf_format: str | None = None  # libsndfile major format
    sf_subtype: str | None = None


FORMATS: Final = {
    f.name: f
    for f in (
        AudioFormat("wav", "audio/wav", True),
        AudioFormat("pcm", f"audio/pcm;rate={OPENAI_PCM_RATE}", True),
        AudioFormat("flac", "audio/flac", False, "FLAC", "PCM_16"),
        AudioFormat("mp3", "audio/mpeg", False, "MP3", "MPEG_LAYER_III"),
        AudioFormat("opus", "audio/ogg;codecs=opus", False, "OGG", "OPUS"),
    )
}
#: OpenAI also names aac; libsndfile has no AAC encoder.
KNOWN_FORMATS: Final = (*FORMATS, "aac")


@cache
def available_formats() -> tuple[str, ...]:
    """Formats this machine can produce (libsndfile builds differ)."""
    import soundfile as sf

    out = []
    for f in FORMATS.values():
        if f.sf_format is None or (
            f.sf_format in sf.available_formats()
            and f.sf_subtype in sf.available_subtypes(f.sf_format)
        ):
            out.append(f.name)
    return tuple(out)


def wav_header(rate: int, data_bytes: int | None = None) -> bytes:
    """44-byte RIFF/WAVE header; ``data_bytes=None``: a stream of unknown length."""
    block = CHANNELS * SAMPLE_WIDTH
    if data_bytes is None:
        riff = data = WAV_UNKNOWN_SIZE
    else:  # RIFF size: everything after its own 8 bytes
        riff, data = _WAV_HEADER_BYTES - 8 + data_bytes, data_bytes
    fmt = struct.pack(
        "<HHIIHH", _WAVE_FORMAT_PCM, CHANNELS, rate, rate * block, block, 8 * block
    )
    return (
        b"RIFF"
        + struct.pack("<I", riff)
        + b"WAVEfmt "
        + struct.pack("<I", _FMT_CHUNK_SIZE)
        + fmt
        + b"data"
        + struct.pack("<I", data)
    )


def output_rate(fmt: str, native: int) -> int:
    """Rate the response is delivered at for ``fmt`` given the voice's rate."""
    if fmt == "pcm":
        return OPENAI_PCM_RATE
    if fmt == "opus" and native not in OPUS_RATES:
        return OPENAI_PCM_RATE
    if fmt == "mp3" and native not in MP3_RATES:
        return OPENAI_PCM_RATE
    return native


def encode_file(fmt: str, audio: np.ndarray, rate: int) -> bytes:
    """A complete file of float32 mono ``audio`` (already at ``rate``)."""
    import soundfile as sf

    f = FORMATS[fmt]
    if f.sf_format is None:  # the streamed formats: the same PCM, sizes known
        pcm = to_int16(audio)
        return wav_header(rate, len(pcm)) + pcm if fmt == "wav" else pcm
    buf = io.BytesIO()
    with sf.SoundFile(
        buf,
        "w",
        samplerate=rate,
        channels=CHANNELS,
        format=f.sf_format,
        subtype=f.sf_subtype,
    ) as out:
        out.write(np.clip(audio, -1.0, 1.0).astype(np.float32))
    return buf.getvalue()


def resampler(native: int, fmt: str) -> Resampler:
    return output_resampler(native, output_rate(fmt, native))
