"""The linear spectrogram ``ref_enc`` reads, exactly as upstream's
``module/mel_processing.py`` ``spectrogram_torch`` (docs/gpt-sovits.md,
reference audio): reflect-pad (n_fft - hop) / 2 samples each side, STFT with a periodic
Hann window and ``center=False``, magnitude ``sqrt(re² + im² + 1e-8)``.

Computed in float64 (upstream runs float32 torch.stft; the float64 result is
what that computes up to its own rounding) and returned as float32.
"""

from __future__ import annotations

from typing import Final

import numpy as np

# configs/s2v2Pro.json data: filter_length, hop_length, win_length at 32 kHz.
N_FFT: Final = 2048
HOP: Final = 640
WIN: Final = 2048
#: spectrogram_torch: sqrt(spec.pow(2).sum(-1) + 1e-8)
MAG_EPS: Final = 1e-8
#: int((n_fft - hop_size) / 2) samples reflected on each side
PAD: Final = (N_FFT - HOP) // 2
BINS: Final = N_FFT // 2 + 1


def frames_of(samples: int) -> int:
    """Spectrogram frames of a 32 kHz clip of ``samples`` (= samples // hop)."""
    return (samples + 2 * PAD - N_FFT) // HOP + 1


def linear_spectrogram(audio32k: np.ndarray) -> np.ndarray:
    """float32 [1025, frames] magnitude spectrogram of a mono 32 kHz clip."""
    x = np.asarray(audio32k)
    if x.ndim != 1:
        raise ValueError(f"spectrogram: expected mono audio [n], got shape {x.shape}")
    # Reflect padding needs more samples than it mirrors.
    if x.size <= PAD:
        raise ValueError(
            f"spectrogram: {x.size} samples is too short (needs > {PAD} at 32 kHz)"
        )
    if not np.isfinite(x).all():
        raise ValueError("spectrogram: audio has NaN or infinite samples")
    padded = np.pad(x.astype(np.float64), PAD, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    # torch.hann_window(win) is periodic: 0.5 - 0.5 cos(2 pi n / win).
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(WIN) / WIN)
    spec = np.fft.rfft(frames * window, n=N_FFT, axis=-1)
    mag = np.sqrt(spec.real**2 + spec.imag**2 + MAG_EPS)
    return np.ascontiguousarray(mag.T, dtype=np.float32)
