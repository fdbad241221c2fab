"""The numpy sinc resampler against torchaudio's (tests/daemon/sdk/audio/
torchaudio_resample.py transcribes it in torch)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from daemon.sdk.audio import sinc

pytest.importorskip("torch")

from tests.daemon.sdk.audio.torchaudio_resample import (  # noqa: E402
    oracle,
    oracle_kernel,
)

RATES = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000)
PAIRS = [(a, b) for a in RATES for b in RATES if a != b]
#: float32 samples of amplitude <= 1: torch's float32 convolution and our
#: float64 sum rounded to float32 differ by its accumulated rounding only
MAX_ABS_ERR = 1e-6
#: torch.i0 in float32 vs the exact i0(beta): 2.2e-7 relative at beta = 8
KAISER_GAIN = 3e-7


def speech_like(n: int, rate: int, seed: int) -> np.ndarray:
    """Harmonics up to near Nyquist with a moving pitch, noise and a pause."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    phase = 2 * np.pi * 130 * (t + 0.05 * np.sin(2 * np.pi * 0.9 * t))
    x = sum(0.4 / k * np.sin(k * phase) for k in range(1, 40))
    x = x + 0.05 * rng.standard_normal(n)
    x[n // 3 : n // 3 + n // 10] *= 1e-3
    return (0.9 * x / max(1e-9, np.abs(x).max())).astype(np.float32)


@pytest.mark.parametrize(("rate", "target"), PAIRS)
def test_kernel_is_torchaudios(rate: int, target: int) -> None:
    want, want_width = oracle_kernel(rate, target)
    got, width = sinc.kernel(rate, target)
    assert width == want_width
    assert got.dtype == np.float32 and got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize(("rate", "target"), PAIRS)
def test_equals_torchaudio(rate: int, target: int) -> None:
    # a short odd-length clip: the edge padding and the output-length rounding
    x = speech_like(rate // 20 + 7, rate, seed=rate + target)
    want = oracle(x, rate, target)
    got = sinc.sinc_resample(x, rate, target)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.abs(got - want).max() < MAX_ABS_ERR


@pytest.mark.parametrize("n", [1, 2, 3, 440, 441, 442, 1001])
@pytest.mark.parametrize(
    ("rate", "target"), [(44100, 32000), (32000, 16000), (8000, 32000)]
)
def test_short_clips(n: int, rate: int, target: int) -> None:
    x = speech_like(n, rate, seed=n)
    want = oracle(x, rate, target)
    got = sinc.sinc_resample(x, rate, target)
    assert got.shape == want.shape == (sinc.out_length(n, rate, target),)
    assert np.abs(got - want).max() < MAX_ABS_ERR


def test_a_quotient_just_above_an_integer_loses_its_sample_as_in_torch() -> None:
    # 44.1 -> 32 kHz of n samples is 320 n / 441; past 2^18 float32 cannot
    # hold 1/441, so torchaudio's ceil(float32(...)) drops the last sample
    n = next(n for n in range(400_000, 401_000) if 320 * n % 441 == 1)
    exact = math.ceil(320 * n / 441)
    assert sinc.out_length(n, 44100, 32000) == exact - 1
    x = speech_like(n, 44100, seed=1)
    want = oracle(x, 44100, 32000)
    got = sinc.sinc_resample(x, 44100, 32000)
    assert got.shape == want.shape == (exact - 1,)
    assert np.abs(got - want).max() < MAX_ABS_ERR


def test_a_whole_reference_chain() -> None:
    """10 s at 44.1 kHz -> 32 kHz -> 16 kHz, as upstream's _get_ref_spec."""
    x = speech_like(441_000, 44100, seed=2)
    want32 = oracle(x, 44100, 32000)
    got32 = sinc.sinc_resample(x, 44100, 32000)
    assert np.abs(got32 - want32).max() < MAX_ABS_ERR
    want16 = oracle(want32, 32000, 16000)
    got16 = sinc.sinc_resample(got32, 32000, 16000)
    assert np.abs(got16 - want16).max() < MAX_ABS_ERR


@pytest.mark.parametrize("beta", [None, 8.0])
def test_kaiser_window(beta: float | None) -> None:
    kw = {"resampling_method": sinc.KAISER, "beta": beta}
    want, _ = oracle_kernel(48000, 32000, **kw)  # type: ignore[arg-type]
    got, _ = sinc.kernel(48000, 32000, sinc.Lowpass(method=sinc.KAISER, beta=beta))
    # torch divides by its float32 i0(beta), a few ulp from the exact one
    np.testing.assert_allclose(got, want.numpy(), rtol=KAISER_GAIN, atol=1e-12)
    x = speech_like(4801, 48000, seed=3)
    y = sinc.sinc_resample(x, 48000, 32000, sinc.Lowpass(method=sinc.KAISER, beta=beta))
    assert np.abs(y - oracle(x, 48000, 32000, **kw)).max() < MAX_ABS_ERR


def test_other_filter_arguments() -> None:
    x = speech_like(2205, 22050, seed=4)
    kw = {"lowpass_filter_width": 16, "rolloff": 0.85}
    y = sinc.sinc_resample(x, 22050, 16000, sinc.Lowpass(16, 0.85))
    assert np.abs(y - oracle(x, 22050, 16000, **kw)).max() < MAX_ABS_ERR


def test_an_odd_rate_is_resampled_without_a_dense_kernel() -> None:
    # gcd 1: torchaudio's kernel would be 32000 x 44119 floats (5.6 GB)
    x = speech_like(4410, 44101, seed=5)
    y = sinc.sinc_resample(x, 44101, 32000)
    assert y.shape == (sinc.out_length(4410, 44101, 32000),)
    # against the same band of the same clip at the neighbouring standard rate
    ref = sinc.sinc_resample(x, 44100, 32000)[: len(y) - 20]
    snr = 10 * np.log10(np.sum(ref**2) / np.sum((y[: len(ref)] - ref) ** 2))
    assert snr > 20  # a 23 ppm rate change: close, not equal


def test_same_rate_and_bad_arguments() -> None:
    x = speech_like(100, 16000, seed=6)
    assert sinc.sinc_resample(x, 16000, 16000) is x
    assert sinc.sinc_resample(np.zeros(0, np.float32), 32000, 16000).shape == (0,)
    for args, words in [
        ((x, 0, 16000), "rates must be positive"),
        ((np.stack([x, x]), 32000, 16000), "expected mono"),
    ]:
        with pytest.raises(ValueError, match=words):
            sinc.sinc_resample(*args)
    with pytest.raises(ValueError, match="method 'linear'"):
        sinc.Lowpass(method="linear")
    with pytest.raises(ValueError, match="lowpass_filter_width must be positive"):
        sinc.Lowpass(0)
