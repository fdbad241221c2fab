"""Audio files for the transcription tests: good ones and the bad-input table.

Every file is made in memory by libsndfile (or, for the malformed ones, by
cutting or patching what it wrote), small enough to upload in milliseconds.
The 2 h file over the cap is a real FLAC of digital silence (180 KB at 8 kHz:
FLAC codes a constant block in a few bytes) and, cheaper still, a WAV header
that announces 2 h in front of one second of samples.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np
import soundfile as sf

from tests.daemon.vad_engine import burst_signal

RATE: Final = 16000
#: Two bursts of tone between silences (s, amplitude): the test-vad engine
#: hears two stretches of speech.
BURSTS: Final = ((0.3, 0.0), (0.6, 0.3), (0.5, 0.0), (0.4, 0.3), (0.4, 0.0))
TWO_HOURS_S: Final = 7200.0
#: The service's default ``limits.max_audio_s``.
CAP_S: Final = 1800.0


def encode(
    audio: np.ndarray, rate: int, fmt: str = "WAV", subtype: str | None = None
) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, audio, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


def speech(rate: int = RATE, channels: int = 1) -> np.ndarray:
    """The two bursts at ``rate``, on every one of ``channels`` ([n] or [n, ch])."""
    mono = burst_signal(BURSTS, rate)
    return mono if channels == 1 else np.repeat(mono[:, None], channels, axis=1)


def speech_wav(rate: int = RATE, channels: int = 1, subtype: str = "PCM_16") -> bytes:
    return encode(speech(rate, channels), rate, "WAV", subtype)


def nan_wav() -> bytes:
    audio = speech()
    audio[RATE // 2] = np.nan  # at 0.5 s
    return encode(audio, RATE, "WAV", "FLOAT")


def truncated_wav() -> bytes:
    data = speech_wav()
    return data[: len(data) // 2]


def truncated_flac() -> bytes:
    data = encode(speech(), RATE, "FLAC")
    return data[: len(data) // 2]


def empty_wav() -> bytes:
    return encode(np.zeros(0, np.float32), RATE, "WAV", "PCM_16")


def silent_wav() -> bytes:
    return encode(np.zeros(2 * RATE, np.float32), RATE, "WAV", "PCM_16")


def two_hour_header_wav() -> bytes:
    """A WAV whose header announces 2 h (16 kHz 16-bit mono), then 1 s of it."""
    data = bytearray(speech_wav())
    size = int(TWO_HOURS_S * RATE * 2)
    struct.pack_into("<I", data, 4, 36 + size)  # RIFF size
    at = data.index(b"data") + 4
    struct.pack_into("<I", data, at, size)
    return bytes(data[: at + 4 + 2 * RATE])


@cache
def two_hour_flac() -> bytes:
    """2 h of real, complete digital silence as FLAC at 8 kHz (0.5 s to make)."""
    rate = 8000
    buf = io.BytesIO()
    minute = np.zeros(60 * rate, np.int16).tobytes()
    with sf.SoundFile(buf, "w", rate, 1, format="FLAC", subtype="PCM_16") as f:
        for _ in range(round(TWO_HOURS_S / 60)):
            f.buffer_write(minute, dtype="int16")
    return buf.getvalue()


def not_audio() -> bytes:
    return b"this is a text file, not audio\n" * 20


@dataclass(frozen=True)
class BadFile:
    name: str
    make: Callable[[], bytes]
    code: str
    #: words the refusal's message must contain
    says: str


#: Files every transcription route refuses, with its code and message.
BAD_FILES: Final = (
    BadFile("not_audio", not_audio, "unsupported_format", "cannot read"),
    BadFile("empty_file", lambda: b"", "unsupported_format", "an empty file"),
    BadFile("truncated_wav", truncated_wav, "invalid_audio", "bytes short"),
    BadFile("truncated_flac", truncated_flac, "invalid_audio", "breaks off"),
    BadFile("zero_samples", empty_wav, "invalid_audio", "0 samples"),
    BadFile("nan_samples", nan_wav, "invalid_audio", "NaN at 0.500 s"),
    BadFile("two_hour_header", two_hour_header_wav, "invalid_value", "7200.00 s"),
    BadFile("two_hour_flac", two_hour_flac, "invalid_value", "7200.00 s"),
)
