"""A Piper voice's audio as piper-tts hands it out: sentence by sentence.

piper-tts (``PiperVoice.synthesize`` with ``SynthesisConfig``'s defaults)
divides each espeak-ng sentence's audio by its peak (``normalize_audio``),
clips it to [-1, 1], and its ``AudioChunk`` converts it to int16 by truncation,
``(x * 32767).astype(int16)``. The engine yields those very int16 values as
``q / 32767``, which the service's ``to_int16`` (round to nearest) turns back
into the same q, so a client gets piper's samples. Between sentences it puts the
voice's ``sentence_silence`` (piper's and wyoming-piper's: none) and no fades:
piper's vocoder ends each sentence itself.

A normalized sentence leaves once it is decoded whole (its peak is not known
before); ``normalize_audio: false`` streams each decoder window as it is done.
A sentence cut for the NPU's encoder buckets (text.py), which piper never does,
gets the shaping module's fades and the comma pause at its cuts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

import numpy as np

from daemon.engines.piper.text import Piece
from daemon.sdk.audio.shaping import shaped_segment
from daemon.sdk.tts import AudioChunk

#: piper's full scale for int16 (piper/voice.py ``_MAX_WAV_VALUE``).
PIPER_WAV_MAX: Final = 32767
#: Below this peak piper takes a sentence for silence (and divides by nothing).
PEAK_FLOOR: Final = 1e-8


def normalized(audio: np.ndarray) -> np.ndarray:
    """piper's peak normalization of one sentence (float32, as its ONNX output)."""
    audio = np.asarray(audio, np.float32)
    peak = np.max(np.abs(audio)) if audio.size else np.float32(0)
    if peak < PEAK_FLOOR:
        return np.zeros_like(audio)
    return audio / peak


def piper_samples(audio: np.ndarray) -> np.ndarray:
    """Clipped to [-1, 1] and on piper's int16 grid (truncated), as q / 32767."""
    x = np.clip(np.asarray(audio, np.float32), -1.0, 1.0).astype(np.float32)
    q = np.clip(x * PIPER_WAV_MAX, -PIPER_WAV_MAX, PIPER_WAV_MAX).astype(np.int16)
    return q.astype(np.float32) / np.float32(PIPER_WAV_MAX)


def silence(seconds: float, rate: int) -> np.ndarray:
    return np.zeros(round(seconds * rate), np.float32)


def _piece_audio(
    piece: Piece, raw: Iterable[np.ndarray], rate: int
) -> Iterator[np.ndarray]:
    """A whole sentence as the vocoder made it; a cut one's parts faded."""
    if not piece.cut:
        yield from raw
        return
    for chunk in shaped_segment(raw, rate, 0, 0.0):
        yield chunk.audio


def spoken(
    parts: Iterable[tuple[Piece, float, Iterable[np.ndarray]]],
    rate: int,
    normalize: bool,
) -> Iterator[AudioChunk]:
    """The request's chunks from (piece, pause after it, its raw audio), in
    order: a segment per espeak-ng sentence, ended by its pause.

    ``parts`` is consumed lazily, piece after piece, so the graph calls (and
    the noise they draw) keep their order and a cancel stops between them.
    """
    held: list[np.ndarray] = []  # the sentence so far, while normalizing
    segment = 0
    for piece, pause_s, raw in parts:
        for audio in _piece_audio(piece, raw, rate):
            if normalize:
                held.append(audio)
            elif audio.size:
                yield AudioChunk(piper_samples(audio), rate, segment)
        pause = silence(pause_s, rate)
        if not piece.ends_sentence:  # a cut inside the sentence
            if normalize:
                held.append(pause)
            else:
                yield AudioChunk(pause, rate, segment)
            continue
        if normalize:
            audio = piper_samples(normalized(np.concatenate(held)))
            pause, held = np.concatenate([audio, pause]), []
        yield AudioChunk(pause, rate, segment, end_of_segment=True)
        segment += 1
