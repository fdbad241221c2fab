"""The linear spectrogram ``ref_enc`` reads, exactly as upstream's
``module/mel_processing.py`` ``spectrogram_torch`` (docs/gpt-sovits.md,
reference audio): reflect-pad (n_fft - hop) / 2 samples each side, STFT with a periodic
Hann window and ``center=False``, magnitude ``sqrt(re² + im² + 1e-8)``.

Computed in float64 by the SDK's STFT (daemon/sdk/audio/stft.py; upstream runs
float32 torch.stft, the float64 result is what that computes up to its own
rounding) and returned as float32.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.sdk.audio.stft import PERIODIC_HANN, Stft, magnitude

# configs/s2v2Pro.json data: filter_length, hop_length, win_length at 32 kHz.
N_FFT: Final = 2048
HOP: Final = 640
WIN: Final = 2048
#: spectrogram_torch: sqrt(spec.pow(2).sum(-1) + 1e-8)
MAG_EPS: Final = 1e-8
#: int((n_fft - hop_size) / 2) samples reflected on each side
PAD: Final = (N_FFT - HOP) // 2
BINS: Final = N_FFT // 2 + 1
#: torch.hann_window(win) is periodic
STFT: Final = Stft(N_FFT, HOP, pad=PAD, win=WIN, kind=PERIODIC_HANN)


def frames_of(samples: int) -> int:
    """Spectrogram frames of a 32 kHz clip of ``samples`` (= samples // hop)."""
    return STFT.frames_of(samples)


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
    mag = magnitude(STFT(x), MAG_EPS)
    return np.ascontiguousarray(mag.T, dtype=np.float32)
