"""The one resampler: a clip equals librosa.resample (soxr_hq) to the bit, or
torchaudio's Resample (test_sinc.py holds the port to its oracle); a stream
equals the clip."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.audio import sinc
from daemon.sdk.audio.resample import (
    SOXR_QUALITY,
    TORCHAUDIO_SINC,
    Resampler,
    librosa_length,
    resample,
)


def noise(n: int, seed: int) -> np.ndarray:
    return (0.3 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


@pytest.mark.parametrize(
    ("rate", "target"),
    [(8000, 24000), (22050, 16000), (44100, 32000), (48000, 16000), (8525, 16000)],
)
def test_equals_librosa(rate: int, target: int) -> None:
    librosa = pytest.importorskip("librosa")
    pcm = noise(rate + 13, seed=rate)  # an odd length: the fix_length rounding
    ref = librosa.resample(pcm, orig_sr=rate, target_sr=target, res_type="soxr_hq")
    ours = resample(pcm, rate, target)
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    assert np.array_equal(ours, ref)


def test_librosas_length_rounds_the_ratio_first() -> None:
    librosa = pytest.importorskip("librosa")
    pcm = noise(8525, seed=0)  # exactly 16000 samples' worth; librosa makes 16001
    ref = librosa.resample(pcm, orig_sr=8525, target_sr=16000, res_type="soxr_hq")
    assert librosa_length(8525, 8525, 16000) == len(ref) == 16001


def test_same_rate_is_the_samples_without_a_copy() -> None:
    pcm = noise(500, seed=1)
    assert resample(pcm, 16000, 16000) is pcm
    assert resample(pcm, 16000, 16000, TORCHAUDIO_SINC) is pcm
    ints = np.arange(4, dtype=np.int16)
    assert resample(ints, 16000, 16000).dtype == np.float32


def test_torchaudio_is_the_sinc_port() -> None:
    pcm = noise(4411, seed=2)
    ours = resample(pcm, 44100, 32000, TORCHAUDIO_SINC)
    assert np.array_equal(ours, sinc.sinc_resample(pcm, 44100, 32000))
    with pytest.raises(ValueError, match="res_type 'kaiser_best'"):
        resample(pcm, 44100, 32000, "kaiser_best")


@pytest.mark.parametrize("rate", [8000, 8525, 22050, 44100, 48000, 192000])
@pytest.mark.parametrize("chunk", [333, 4000])
def test_stream_equals_the_clip(rate: int, chunk: int) -> None:
    """soxr's stream gives the one-shot samples; ``fix`` ends it at librosa's
    length."""
    x = noise(rate + 77, seed=rate + chunk)
    r = Resampler(rate, 16000)
    parts = [r.push(x[i : i + chunk]) for i in range(0, len(x), chunk)]
    streamed = np.concatenate([*parts, r.finish()])
    assert streamed.dtype == np.float32
    assert np.array_equal(streamed, resample(x, rate, 16000))


def test_unfixed_stream_ends_where_soxr_does() -> None:
    import soxr

    x = noise(44100 + 77, seed=3)
    r = Resampler(44100, 24000, fix=False)
    got = np.concatenate([r.push(x[:1000]), r.push(x[1000:], last=True)])
    s = soxr.ResampleStream(44100, 24000, 1, dtype="float32", quality=SOXR_QUALITY)
    want = np.concatenate(
        [s.resample_chunk(x[:1000]), s.resample_chunk(x[1000:], last=True)]
    )
    assert np.array_equal(got, want)


def test_same_rate_stream_passes_through_and_bad_rates_are_refused() -> None:
    x = noise(10, seed=4)
    r = Resampler(16000, 16000)
    assert np.array_equal(np.concatenate([r.push(x), r.finish()]), x)
    with pytest.raises(ValueError, match="rates must be positive"):
        Resampler(0, 16000)
