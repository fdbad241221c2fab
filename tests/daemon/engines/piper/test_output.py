"""A Piper voice's audio leaves as piper-tts hands it out (output.py): sentences
normalized whole, piper's int16 values, its silence, fades only at NPU cuts."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.piper.output import normalized, piper_samples, spoken
from daemon.engines.piper.text import Piece
from daemon.sdk.audio.shaping import COMMA_PAUSE_S, to_int16

RATE = 22050
#: A sentence silence other than piper's default (0.0), to tell it apart.
SILENCE_S = 0.25


def _piece(ends: bool = True, cut: bool = False, pause: float = 0.0) -> Piece:
    return Piece((1, 0, 2), "a", pause, ends_sentence=ends, cut=cut)


def _windows(peak: float, n: int = 3, size: int = 4000) -> list[np.ndarray]:
    """A vocoder's output in n windows, loudest sample `peak`, none silent."""
    t = np.arange(n * size) / RATE
    audio = (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) * np.sin(2 * np.pi * 220 * t)
    audio = (audio / np.abs(audio).max() * peak).astype(np.float32)
    return list(audio.reshape(n, size))


def test_samples_are_pipers_own_int16_values() -> None:
    piper = pytest.importorskip("piper.voice")
    x = np.random.default_rng(0).uniform(-1.2, 1.2, 20000).astype(np.float32)
    x[:4] = [1.0, -1.0, 0.99999, -0.99999]
    theirs = piper.AudioChunk(RATE, 2, 1, np.clip(x, -1, 1), [], []).audio_int16_array
    assert np.array_equal(np.frombuffer(to_int16(piper_samples(x)), "<i2"), theirs)


def test_normalization_is_pipers_and_silence_stays_silence() -> None:
    x = np.array([0.1, -0.4, 0.2], np.float32)
    assert np.array_equal(normalized(x), x / np.float32(0.4))
    quiet = np.full(4, 1e-9, np.float32)  # piper: below 1e-8 it is silence
    assert not normalized(quiet).any() and normalized(np.zeros(0)).size == 0


def test_each_sentence_is_normalized_whole_and_followed_by_its_silence() -> None:
    parts = [
        (_piece(), SILENCE_S, iter(_windows(0.4))),
        (_piece(), 0.0, iter(_windows(0.8))),  # the last: no silence after it
    ]
    chunks = list(spoken(parts, RATE, normalize=True))
    assert [(c.segment, c.end_of_segment) for c in chunks] == [(0, True), (1, True)]
    first, second = (c.audio for c in chunks)
    gap = round(SILENCE_S * RATE)
    assert first.size == 12000 + gap and not first[-gap:].any()
    assert second.size == 12000
    # each sentence on its own scale, as piper: both reach full scale
    assert np.abs(first).max() == np.abs(second).max() == 1.0
    # no fades: the first and last samples are the vocoder's, scaled
    want = piper_samples(normalized(np.concatenate(_windows(0.8))))
    assert np.array_equal(second, want)


def test_without_normalization_each_window_leaves_as_it_is_made() -> None:
    made: list[int] = []

    def vocoder(peak: float):  # type: ignore[no-untyped-def]
        for i, w in enumerate(_windows(peak)):
            made.append(i)
            yield w

    chunks = spoken([(_piece(), 0.0, vocoder(0.4))], RATE, normalize=False)
    first = next(chunks)
    assert made == [0] and np.array_equal(first.audio, piper_samples(_windows(0.4)[0]))
    rest = list(chunks)
    assert rest[-1].end_of_segment and not rest[-1].audio.size
    assert np.abs(np.concatenate([c.audio for c in rest])).max() <= 0.4


def test_a_cut_sentence_is_one_segment_faded_and_paused_at_its_cut() -> None:
    # Only static NPU buckets cut a sentence (text.py); piper never does.
    parts = [
        (_piece(ends=False, cut=True, pause=COMMA_PAUSE_S), COMMA_PAUSE_S,
         iter(_windows(0.5))),
        (_piece(cut=True), 0.0, iter(_windows(0.25))),
    ]  # fmt: skip
    (chunk,) = spoken(parts, RATE, normalize=True)
    assert (chunk.segment, chunk.end_of_segment) == (0, True)
    pause = round(COMMA_PAUSE_S * RATE)
    assert chunk.audio.size == 2 * 12000 + pause
    assert not chunk.audio[12000 : 12000 + pause].any()
    # one scale for the whole sentence: its louder part reaches full scale
    assert np.abs(chunk.audio[:12000]).max() == 1.0
    assert np.abs(chunk.audio[12000 + pause :]).max() == pytest.approx(0.5, abs=1e-3)
    # faded at the cut (and at the sentence's edges, as any cut piece)
    edges = chunk.audio[[0, 11999, 12000 + pause, -1]]
    assert np.abs(edges).max() < 0.01
