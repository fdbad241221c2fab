"""Audio shaping at segment edges and at the output edge (int16, its rates).

Why fades: a segment's last phone is often cut 5-20 ms after its onset when the
vocoder output is trimmed; a raised-cosine fade-in of 10 ms and fade-out of 40 ms
removes the clicks (docs/board.md, sentences, pauses and fades, NOTES pitfall 17).

Pauses, one rule whichever way text arrives: ``SENTENCE_PAUSE_S`` between two
sentences (``daemon.text.sentences`` decides where they end), ``COMMA_PAUSE_S`` where a
sentence too long for one synthesis call is cut, nothing after the last one.
Engines apply it inside a request; a Wyoming stream, whose sentences are separate
requests, puts the same pause before each sentence after the first (the
engine's ``Capabilities.sentence_pause_s``: an engine may keep another rhythm,
as Piper voices keep piper's, none).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

import numpy as np

from daemon.sdk.audio.resample import Resampler
from daemon.sdk.capabilities import DEFAULT_SENTENCE_PAUSE_S
from daemon.sdk.tts import AudioChunk

FADE_IN_S: Final = 0.010
FADE_OUT_S: Final = 0.040
SENTENCE_PAUSE_S: Final = DEFAULT_SENTENCE_PAUSE_S
COMMA_PAUSE_S: Final = 0.15
#: Output rates a client may ask for (Hz).
OUTPUT_RATES: Final = (32000, 24000, 22050, 16000)
INT16_MAX: Final = 32767
INT16_MIN: Final = -32768


def raised_cosine(n: int) -> np.ndarray:
    """Rising half-cosine window of ``n`` samples, from 0 towards 1."""
    if n <= 0:
        return np.ones(0, np.float32)
    t = (np.arange(n, dtype=np.float64) + 0.5) / n
    return (0.5 - 0.5 * np.cos(np.pi * t)).astype(np.float32)


class SegmentShaper:
    """Applies fade-in at a segment's start and fade-out at its end, streaming.

    Audio arrives in chunks; the fade-out needs the last 40 ms, so that much is
    held back until ``finish`` is called.
    """

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self._fade_in = raised_cosine(round(FADE_IN_S * sample_rate))
        self._fade_out_n = round(FADE_OUT_S * sample_rate)
        self._pos = 0
        self._tail = np.zeros(0, np.float32)

    def push(self, audio: np.ndarray) -> np.ndarray:
        """Shape the next chunk; returns what can be released now."""
        a = np.array(audio, np.float32)  # a copy: the caller's array stays as is
        n_in = len(self._fade_in)
        if self._pos < n_in:
            k = min(n_in - self._pos, len(a))
            a[:k] *= self._fade_in[self._pos : self._pos + k]
        self._pos += len(a)
        x = np.concatenate([self._tail, a])
        keep = min(self._fade_out_n, len(x))
        out, self._tail = x[: len(x) - keep], x[len(x) - keep :].copy()
        return out

    def finish(self, pause_s: float = 0.0) -> np.ndarray:
        """Release the held tail faded out, then ``pause_s`` of silence."""
        tail = self._tail
        if len(tail):
            tail = tail * raised_cosine(len(tail))[::-1]
        self._tail = np.zeros(0, np.float32)
        pause = np.zeros(round(pause_s * self.sample_rate), np.float32)
        return np.concatenate([tail, pause]).astype(np.float32)


def shaped_segment(
    raw: Iterable[np.ndarray], sample_rate: int, segment: int, pause_s: float
) -> Iterator[AudioChunk]:
    """One segment's vocoder output as chunks: faded in/out, then its pause.

    Every engine streams its segments through here, so fades and pauses sound the
    same whatever produced the audio.
    """
    shaper = SegmentShaper(sample_rate)
    for audio in raw:
        out = shaper.push(audio)
        if out.size:
            yield AudioChunk(out, sample_rate, segment=segment)
    tail = shaper.finish(pause_s)
    yield AudioChunk(tail, sample_rate, segment, end_of_segment=True)


def to_int16(audio: np.ndarray) -> bytes:
    """float32 [-1, 1] → little-endian int16 PCM: ``round(x * 32767)``, clipped
    to the int16 range.  Clipping after scaling keeps -32768 reachable (below
    -1): GPT-SoVITS hands out upstream's int16 values as ``q / 32767``
    (daemon/engines/gptsovits/pcm.py), its -32768 included; for x in [-1, 1]
    it is the same as clipping x first."""
    x = np.rint(np.asarray(audio, np.float32) * np.float32(INT16_MAX))
    return np.clip(x, INT16_MIN, INT16_MAX).astype("<i2").tobytes()


def output_resampler(in_rate: int, out_rate: int) -> Resampler:
    """The output edge's stream at ``out_rate`` (one of ``OUTPUT_RATES``, or
    the engine's own): soxr HQ, ending where soxr's flush ends."""
    if out_rate not in OUTPUT_RATES and out_rate != in_rate:
        raise ValueError(f"output rate {out_rate} Hz: expected one of {OUTPUT_RATES}")
    return Resampler(in_rate, out_rate, fix=False)


class Frames:
    """Cuts a byte stream into frames of exactly ``size`` bytes.

    Audio arrives in pieces of any length (vocoder windows); what is left over
    waits for the next piece, and ``flush`` releases it at the end.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._held = b""

    def push(self, data: bytes) -> list[bytes]:
        data = self._held + data
        whole = len(data) - len(data) % self.size
        self._held = data[whole:]
        return [data[i : i + self.size] for i in range(0, whole, self.size)]

    def flush(self) -> bytes:
        rest, self._held = self._held, b""
        return rest
