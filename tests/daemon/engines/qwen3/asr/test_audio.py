"""Normalisation as upstream's ``normalize_audio_input``: channel mean, soxr to
16 kHz, the peak division; streamed in chunks."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.qwen3.asr.audio import SAMPLE_RATE, peak_scale
from daemon.engines.qwen3.asr.mel import MelStream
from daemon.sdk.asr import downmix
from daemon.sdk.audio.resample import Resampler
from tests.daemon.engines.qwen3.asr.test_mel import MEL, TOLERANCE

utils = pytest.importorskip("qwen_asr.inference.utils")


def _signal(rate: int, seconds: float, channels: int, level: float) -> np.ndarray:
    rng = np.random.default_rng(rate + channels)
    t = np.arange(round(rate * seconds)) / rate
    tone = np.sin(2 * np.pi * 440 * t)[:, None] * np.linspace(0.2, 1, channels)
    noise = 0.05 * rng.standard_normal((len(t), channels))
    x = level * (tone + noise).astype(np.float32)
    return x[:, 0] if channels == 1 else x


def ours(x: np.ndarray, rate: int, chunk: int) -> np.ndarray:
    """16 kHz mono, peak-divided, streamed ``chunk`` input frames at a time."""
    r = Resampler(rate, SAMPLE_RATE)
    parts = [r.push(downmix(x[i : i + chunk])) for i in range(0, len(x), chunk)]
    y = np.concatenate([*parts, r.finish()])
    return y * np.float32(peak_scale(float(np.max(np.abs(y)))))


@pytest.mark.parametrize(
    ("rate", "channels", "level"),
    [
        (16000, 1, 0.5),
        (8000, 1, 0.5),
        (44100, 2, 0.5),
        (48000, 8, 0.5),
        (192000, 1, 0.5),
        (22050, 2, 3.0),
    ],  # fmt: skip
)
def test_equal_to_upstream(rate: int, channels: int, level: float) -> None:
    x = _signal(rate, 1.37, channels, level)
    ref = utils.normalize_audio_input((x, rate))
    got = ours(x, rate, chunk=997)
    assert got.shape == ref.shape
    # the stream equals soxr's one-shot bit for bit; the peak division is one
    # float32 multiply here, upstream divides (one rounding apart)
    assert np.abs(got - ref).max() <= 1e-7


def test_an_odd_rate_ends_at_librosas_length() -> None:
    """librosa rounds the ratio before the ceiling: 1 s at 8525 Hz is 16001
    samples upstream, not the exact 16000."""
    x = _signal(8525, 1.0, 1, 0.5)
    ref = utils.normalize_audio_input((x, 8525))
    got = ours(x, 8525, chunk=997)
    assert got.shape == ref.shape == (16001,)
    assert np.abs(got - ref).max() <= 1e-7


def test_one_shot_and_stream_are_identical() -> None:
    import soxr

    x = _signal(44100, 2.0, 1, 0.5)
    r = Resampler(44100, SAMPLE_RATE)
    streamed = np.concatenate([r.push(x[i : i + 333]) for i in range(0, len(x), 333)])
    one = soxr.resample(x, 44100, SAMPLE_RATE, quality="soxr_hq")
    n = min(len(streamed), len(one))
    np.testing.assert_array_equal(streamed[:n], one[:n])


def test_peak_over_one_scales_the_features() -> None:
    """Upstream divides by the peak before its features; the mel stream applies
    the scale to unscaled powers and gives the same features."""
    x = _signal(16000, 1.5, 1, 4.0)
    ref_audio = utils.normalize_audio_input((x, 16000))
    from transformers import WhisperFeatureExtractor

    fe = WhisperFeatureExtractor(feature_size=128)
    ref = fe._np_extract_fbank_features(ref_audio[None], "cpu")[0].T
    mel = MelStream(MEL)
    mel.push(x)
    mel.finish()
    s = peak_scale(mel.peak)
    assert s < 1
    got = mel.features(0, mel.frames, s, mel.log_max(s))
    assert np.abs(got - ref).max() <= TOLERANCE


def test_peak_scale() -> None:
    assert peak_scale(0.7) == 1.0 and peak_scale(1.0) == 1.0
    assert peak_scale(4.0) == 0.25
