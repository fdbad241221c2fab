"""The three scores on synthetic signals whose answer is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scripts.gptsovits.evaluate import metrics

SR = metrics.SAMPLE_RATE
BREATH_RMS = 0.015  # -36.5 dBFS: inside the -50..-22 dB breath band
# A narrow tone 9 dB below the breath's total power: ~20 dB over its 15.6 Hz bin.
TONE_AMPLITUDE = 0.5 * BREATH_RMS


def _t(seconds: float) -> np.ndarray:
    return np.arange(int(seconds * SR)) / SR


def _voiced(seconds: float) -> np.ndarray:
    t = _t(seconds)  # a 150 Hz vowel-like tone at -13 dBFS: voiced, loud
    return 0.2 * np.sin(2 * np.pi * 150 * t) + 0.1 * np.sin(2 * np.pi * 300 * t)


@pytest.fixture(scope="module")
def speech() -> tuple[np.ndarray, tuple[int, int]]:
    """0.5 s voiced, 0.6 s breath noise, 0.5 s voiced; the breath's samples."""
    rng = np.random.default_rng(0)
    breath = BREATH_RMS * rng.standard_normal(int(0.6 * SR))
    a = len(_voiced(0.5))
    return np.concatenate([_voiced(0.5), breath, _voiced(0.5)]), (a, a + len(breath))


def test_breath_window_is_the_noise_between_voiced_parts(speech) -> None:
    audio, (start, end) = speech
    windows = metrics.breath_windows(audio)
    assert len(windows) == 1
    (a, b) = windows[0]
    # pyin's and the RMS frame's reach blur each edge by up to ~2048 samples.
    assert abs(a - start) < 2048 and abs(b - end) < 2048
    assert b - a >= metrics.BREATH_MIN_FRAMES * metrics.FRAME_HOP


def test_no_breath_in_voiced_sound_or_silence() -> None:
    assert metrics.breath_windows(_voiced(1.0)) == []
    assert metrics.breath_windows(np.zeros(SR)) == []
    assert metrics.breath_windows(np.zeros(100)) == []  # shorter than a frame


def test_a_tone_inside_the_breath_raises_tonality(speech) -> None:
    audio, window = speech
    plain = metrics.breath_tonality(audio, [window])
    toned = audio.copy()
    n = window[1] - window[0]
    toned[window[0] : window[1]] += TONE_AMPLITUDE * np.sin(
        2 * np.pi * 1000 * np.arange(n) / SR
    )
    buzzing = metrics.breath_tonality(toned, [window])
    assert plain < 1.0  # white noise has no narrow peak 6 dB over its median
    assert buzzing > plain + 10.0


def test_a_tone_outside_the_band_or_window_does_not_count(speech) -> None:
    audio, window = speech
    base = metrics.breath_tonality(audio, [window])
    high = audio.copy()  # 6 kHz: above the 400-4000 Hz band
    n = window[1] - window[0]
    high[window[0] : window[1]] += TONE_AMPLITUDE * np.sin(
        2 * np.pi * 6000 * np.arange(n) / SR
    )
    assert metrics.breath_tonality(high, [window]) == pytest.approx(base, abs=1.0)
    outside = audio.copy()  # the voiced part's tone is not in a breath window
    outside[: window[0]] += 0.05 * np.sin(2 * np.pi * 1000 * _t(window[0] / SR))
    assert metrics.breath_tonality(outside, [window]) == pytest.approx(base)


def test_tonality_is_nan_without_a_usable_window(speech) -> None:
    audio, (a, _) = speech
    assert math.isnan(metrics.breath_tonality(audio, []))
    short = (a, a + metrics.TONAL_NPERSEG - 1)  # shorter than one segment
    assert math.isnan(metrics.breath_tonality(audio, [short]))


def test_the_comb_is_every_500_hz_multiple_above_10_khz() -> None:
    comb = metrics.comb_hz(SR)
    assert comb[0] == 10500 and comb[-1] == 15500 and len(comb) == 11
    assert all(f % 500 == 0 for f in comb)


def test_a_comb_above_10_khz_raises_whine() -> None:
    rng = np.random.default_rng(1)
    noise = 0.05 * rng.standard_normal(2 * SR)
    t = _t(2.0)
    comb = sum(0.01 * np.sin(2 * np.pi * f * t) for f in (11000, 12000, 13500))
    below = sum(0.01 * np.sin(2 * np.pi * f * t) for f in (4000, 6000, 8000))
    base = metrics.whine_db(noise)
    assert base < 6.0
    assert metrics.whine_db(noise + comb) > base + 10.0
    assert metrics.whine_db(noise + below) == pytest.approx(base, abs=1.0)


def test_whine_needs_one_segment() -> None:
    with pytest.raises(ValueError, match="at least 8192 samples"):
        metrics.whine_db(np.zeros(100))


def test_log_mel_distance() -> None:
    rng = np.random.default_rng(2)
    a = 0.1 * rng.standard_normal(SR // 2)
    assert metrics.log_mel_distance(a, a) == 0.0
    half = metrics.log_mel_distance(0.5 * a, a)  # every mel bin: log 2 apart
    assert half == pytest.approx(np.log(2.0), rel=1e-3)
    assert metrics.log_mel_distance(a, rng.standard_normal(SR // 2) * 0.1) > 0.1
    # Only the frames both have count: a longer copy is still distance 0.
    assert metrics.log_mel_distance(np.concatenate([a, a]), a) < 0.05
