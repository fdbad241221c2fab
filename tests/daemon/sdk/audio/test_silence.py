"""Cut points of the energy VAD on synthetic speech-like bursts."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.audio.silence import (
    FRAME_S,
    MIN_PAUSE_S,
    SEARCH_FROM,
    choose_cut,
    levels_db,
    silent_runs,
)

RATE = 16000


def words(
    plan: list[tuple[float, float]], seed: int = 0, noise_db: float = -65.0
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Speech-like bursts: (word s, pause s) pairs; each word a voiced tone
    with a syllable envelope and a hiss, over room noise. Returns the signal
    and each pause's (start, stop) samples."""
    rng = np.random.default_rng(seed)
    parts, pauses, at = [], [], 0
    for word_s, pause_s in plan:
        n = round(word_s * RATE)
        t = np.arange(n) / RATE
        syllables = 0.55 + 0.45 * np.sin(2 * np.pi * rng.uniform(3, 6) * t) ** 2
        voiced = np.sin(2 * np.pi * rng.uniform(110, 220) * t) * syllables
        envelope = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.02)  # 20 ms ramps
        parts.append(0.3 * envelope * (voiced + 0.1 * rng.standard_normal(n)))
        at += n
        m = round(pause_s * RATE)
        parts.append(np.zeros(m))
        pauses.append((at, at + m))
        at += m
    x = np.concatenate(parts)
    x += 10 ** (noise_db / 20) * rng.standard_normal(len(x))
    return x.astype(np.float32), pauses


def test_levels_and_runs() -> None:
    x = np.concatenate([np.zeros(320), 0.5 * np.ones(640), np.zeros(320)])
    db = levels_db(x.astype(np.float32), 320)
    assert db[0] < -100 and abs(db[1] - 20 * np.log10(0.5)) < 1e-9
    assert silent_runs(db < -60) == [(0, 1), (3, 4)]


@pytest.mark.parametrize("seed", range(5))
def test_cuts_fall_in_pauses(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    plan = [(rng.uniform(0.25, 0.7), rng.uniform(0.18, 0.5)) for _ in range(20)]
    x, pauses = words(plan, seed)
    max_len = round(rng.uniform(2.5, 4.0) * RATE)
    start = 0
    while len(x) - start > max_len:
        cut = start + choose_cut(x[start:], RATE, max_len)
        assert start + max_len * SEARCH_FROM < cut <= start + max_len
        assert any(a <= cut < b for a, b in pauses), (cut, pauses)
        start = cut


def test_latest_real_pause_wins() -> None:
    # pauses end at 1.2 s (0.3 s long) and 2.5 s (0.2 s long); max 3 s
    x, pauses = words([(0.9, 0.3), (1.0, 0.2), (1.5, 0.1)])
    cut = choose_cut(x, RATE, 3 * RATE)
    a, b = pauses[1]
    assert a <= cut < b


def test_without_a_pause_the_quietest_stretch() -> None:
    # only pauses shorter than MIN_PAUSE_S in the search span: the longest is
    # the quietest stretch of MIN_PAUSE_S
    short = MIN_PAUSE_S - 2 * FRAME_S
    x, pauses = words([(1.6, 0.05), (0.4, short), (0.4, 0.06), (1.0, 0.0)])
    cut = choose_cut(x, RATE, 3 * RATE)
    a, b = pauses[1]
    assert a <= cut < b


def test_a_quiet_frame_inside_a_word_loses_to_a_quiet_stretch() -> None:
    # a 20 ms near-silent closure inside a word at 2.0 s, a 120 ms dip at 2.6 s
    t = np.arange(4 * RATE) / RATE
    level = np.ones_like(t)
    level[(t >= 2.0) & (t < 2.02)] = 1e-3
    level[(t >= 2.54) & (t < 2.66)] = 0.05
    x = (0.3 * level * np.sin(2 * np.pi * 150 * t)).astype(np.float32)
    cut = choose_cut(x, RATE, 3 * RATE)
    assert 2.54 <= cut / RATE < 2.66


def test_continuous_sound_cuts_at_the_quietest_stretch() -> None:
    t = np.arange(4 * RATE) / RATE
    level = 1.0 - 0.9 * np.exp(-(((t - 2.7) / 0.05) ** 2))  # a dip at 2.7 s
    x = (0.3 * level * np.sin(2 * np.pi * 150 * t)).astype(np.float32)
    cut = choose_cut(x, RATE, 3 * RATE)
    assert abs(cut / RATE - 2.7) < 2 * FRAME_S


def test_a_fitting_segment_is_refused() -> None:
    with pytest.raises(ValueError, match="no cut needed"):
        choose_cut(np.zeros(100, np.float32), RATE, 100)
