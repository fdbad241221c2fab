"""linear_spectrogram against upstream's spectrogram_torch, transcribed here with
torch.stft (module/mel_processing.py; the test is its only copy)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from daemon.engines.gptsovits.reference.spectrogram import (
    BINS,
    HOP,
    N_FFT,
    WIN,
    frames_of,
    linear_spectrogram,
)

#: spectrogram parity with upstream within 1e-5
MAX_ERR = 1e-5


def spectrogram_torch(y: torch.Tensor) -> torch.Tensor:
    """upstream spectrogram_torch(y, 2048, 32000, 640, 2048, center=False)."""
    window = torch.hann_window(WIN).to(dtype=y.dtype)
    pad = int((N_FFT - HOP) / 2)
    y = torch.nn.functional.pad(y.unsqueeze(1), (pad, pad), mode="reflect").squeeze(1)
    spec = torch.stft(
        y, N_FFT, hop_length=HOP, win_length=WIN, window=window, center=False,
        pad_mode="reflect", normalized=False, onesided=True, return_complex=True,
    )  # fmt: skip
    spec = torch.view_as_real(spec)
    return torch.sqrt(spec.pow(2).sum(-1) + 1e-8)


def _clip(seconds: float, seed: int = 0) -> np.ndarray:
    """A speech-like 32 kHz test signal: harmonics, noise and a silent gap."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(32000 * seconds)) / 32000
    x = sum(0.2 / k * np.sin(2 * np.pi * 150 * k * t) for k in range(1, 8))
    x = x + 0.05 * rng.standard_normal(t.size)
    x[t.size // 3 : t.size // 2] = 0.0
    return x.astype(np.float32)


@pytest.mark.parametrize("seconds", [0.1, 3.0, 10.0])
def test_matches_spectrogram_torch_float64(seconds: float) -> None:
    x = _clip(seconds)
    want = spectrogram_torch(torch.from_numpy(x.astype(np.float64))[None])[0].numpy()
    got = linear_spectrogram(x)
    assert got.shape == want.shape == (BINS, frames_of(x.size))
    assert got.dtype == np.float32
    assert np.abs(got - want).max() <= MAX_ERR * np.abs(want).max()


def test_matches_spectrogram_torch_float32() -> None:
    """Upstream runs float32: the same within float32 rounding."""
    x = _clip(3.0, seed=1)
    want = spectrogram_torch(torch.from_numpy(x)[None])[0].numpy()
    got = linear_spectrogram(x)
    assert np.abs(got - want).max() <= MAX_ERR * np.abs(want).max()


def test_frames_are_samples_over_hop() -> None:
    assert frames_of(320000) == 500  # 10 s at 32 kHz: the full-size ref_enc
    assert linear_spectrogram(np.zeros(1000, np.float32)).shape == (BINS, 1)


@pytest.mark.parametrize(
    ("audio", "message"),
    [
        (np.zeros((2, 4000), np.float32), "mono"),
        (np.zeros(500, np.float32), "too short"),
        (np.full(4000, np.nan, np.float32), "NaN"),
    ],
)
def test_bad_audio_is_refused(audio: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        linear_spectrogram(audio)
