"""The magnitude log-mel of the HiFi-GAN / BigVGAN recipes, which two
upstreams compute with the same ``mel_spectrogram`` function: Qwen3-TTS's
x-vector front end (docs/qwen3.md, x-vector mel) and IndexTTS-2's prompt mel
(packages/hexvoice-indextts/docs/upstream.md).

Reflect padding of (n_fft - hop) / 2 on both sides, an STFT with a periodic
Hann window (a shorter one centred in n_fft) and ``center=False``, magnitude
``sqrt(re^2 + im^2 + 1e-9)``, the librosa slaney mel basis (a table the
bundle carries, computed at build time so the runtime needs no librosa), and
the natural log of ``clamp(1e-5)``; here in float64 by the SDK's STFT
(upstream's float32 torch equals it up to its own rounding).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.sdk.audio.mel import floored_log
from daemon.sdk.audio.stft import Stft, magnitude

#: mel_spectrogram: sqrt(re^2 + im^2 + 1e-9)
MAGNITUDE_EPS: Final = 1e-9
#: dynamic_range_compression_torch(clip_val=1e-5)
LOG_FLOOR: Final = 1e-5


class LogMel:
    """``mel_spectrogram`` of float32 samples at the basis's rate."""

    def __init__(self, stft: Stft, basis: np.ndarray) -> None:
        """``basis`` [n_mels, n_fft / 2 + 1]; ValueError on another shape."""
        if basis.ndim != 2 or basis.shape[1] != stft.bins:
            raise ValueError(
                f"mel basis is {list(basis.shape)}, expected [n_mels, {stft.bins}] "
                "(n_fft/2 + 1 bins)"
            )
        self.stft = stft
        self._basis_t = np.ascontiguousarray(basis.T, np.float64)

    def __call__(self, pcm: np.ndarray) -> np.ndarray:
        """float32 log-mel [frames, n_mels]."""
        y = np.asarray(pcm, np.float32)
        if len(y) <= self.stft.pad:
            raise ValueError(
                f"a clip needs more than {self.stft.pad} samples for the mel"
            )
        mel = magnitude(self.stft(y), MAGNITUDE_EPS) @ self._basis_t
        return floored_log(mel, LOG_FLOOR).astype(np.float32)
