"""The shared clip resampler equals librosa.resample (soxr_hq) to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.audio.resample import resample


def noise(n: int, seed: int) -> np.ndarray:
    return (0.3 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


@pytest.mark.parametrize(
    ("rate", "target"), [(8000, 24000), (22050, 16000), (44100, 32000), (48000, 16000)]
)
def test_equals_librosa(rate: int, target: int) -> None:
    librosa = pytest.importorskip("librosa")
    pcm = noise(rate + 13, seed=rate)  # an odd length: the fix_length rounding
    ref = librosa.resample(pcm, orig_sr=rate, target_sr=target, res_type="soxr_hq")
    ours = resample(pcm, rate, target)
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    assert np.array_equal(ours, ref)


def test_same_rate_is_the_samples_without_a_copy() -> None:
    pcm = noise(500, seed=1)
    assert resample(pcm, 16000, 16000) is pcm
    ints = np.arange(4, dtype=np.int16)
    assert resample(ints, 16000, 16000).dtype == np.float32
