"""Mel filter banks as the upstream front ends build them, and their log.

- slaney (:func:`slaney_filters`): transformers' ``mel_filter_bank(norm=
  "slaney", mel_scale="slaney")``, Whisper's (the same triangles as librosa's
  ``filters.mel``; Qwen3-TTS's x-vector basis is librosa's own, computed at
  build time and shipped in the bundle);
- kaldi (:func:`kaldi_filters`): ``torchaudio.compliance.kaldi.get_mel_banks``
  with vtln_warp 1: triangles on Kaldi's mel scale 1127 ln(1 + f / 700) (HTK's)
  with no area normalisation, the Nyquist bin's weight 0.

:class:`BandedFilters` applies a bank of narrow filters to a power spectrum
over their non-zero bands only.
"""

from __future__ import annotations

from typing import Final

import numba
import numpy as np

# Slaney's mel scale (librosa/transformers "slaney"): linear below 1 kHz, log above.
_SLANEY_F_SP: Final = 200.0 / 3.0
_SLANEY_MIN_LOG_HZ: Final = 1000.0
_SLANEY_LOGSTEP: Final = 27.0 / np.log(6.4)
#: Kaldi's (and HTK's) mel scale: 1127 ln(1 + f / 700)
_KALDI_MEL: Final = 1127.0
_KALDI_BREAK_HZ: Final = 700.0


def _hz_to_slaney(hz: np.ndarray | float) -> np.ndarray:
    hz = np.atleast_1d(np.asarray(hz, np.float64))
    mel = hz / _SLANEY_F_SP
    min_log_mel = _SLANEY_MIN_LOG_HZ / _SLANEY_F_SP
    log = hz >= _SLANEY_MIN_LOG_HZ
    mel[log] = min_log_mel + np.log(hz[log] / _SLANEY_MIN_LOG_HZ) * _SLANEY_LOGSTEP
    return mel


def _slaney_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, np.float64)
    hz = mel * _SLANEY_F_SP
    min_log_mel = _SLANEY_MIN_LOG_HZ / _SLANEY_F_SP
    log = mel >= min_log_mel
    hz[log] = _SLANEY_MIN_LOG_HZ * np.exp((mel[log] - min_log_mel) / _SLANEY_LOGSTEP)
    return hz


def slaney_filters(
    n_fft: int, n_mels: int, rate: int, fmin: float, fmax: float
) -> np.ndarray:
    """Slaney-normalised triangular filters [n_fft // 2 + 1, n_mels] (float64)."""
    fft_hz = np.linspace(0, rate // 2, n_fft // 2 + 1)
    edges = _slaney_to_hz(
        np.linspace(_hz_to_slaney(fmin)[0], _hz_to_slaney(fmax)[0], n_mels + 2)
    )
    width = np.diff(edges)
    slopes = edges[None, :] - fft_hz[:, None]
    down = -slopes[:, :-2] / width[:-1]
    up = slopes[:, 2:] / width[1:]
    bank = np.maximum(0.0, np.minimum(down, up))
    return bank * (2.0 / (edges[2 : n_mels + 2] - edges[:n_mels]))[None, :]


def kaldi_mel(freq: np.ndarray | float) -> np.ndarray:
    return _KALDI_MEL * np.log1p(np.asarray(freq, np.float64) / _KALDI_BREAK_HZ)


def kaldi_filters(
    n_fft: int, n_mels: int, rate: int, low: float, high: float
) -> np.ndarray:
    """[n_mels, n_fft // 2 + 1] triangular weights, ``low`` .. ``high`` Hz
    (kaldi.get_mel_banks, padded with a zero column for the Nyquist bin)."""
    lo, hi = kaldi_mel(low), kaldi_mel(high)
    delta = (hi - lo) / (n_mels + 1)
    left = lo + np.arange(n_mels)[:, None] * delta
    center, right = left + delta, left + 2 * delta
    mel = kaldi_mel(rate / n_fft * np.arange(n_fft // 2))[None]
    up = (mel - left) / (center - left)
    down = (right - mel) / (right - center)
    banks = np.maximum(0.0, np.minimum(up, down))
    return np.pad(banks, ((0, 0), (0, 1)))


def floored_log(x: np.ndarray, floor: float) -> np.ndarray:
    """ln(max(x, floor)): torch's ``log(clamp(x, min=floor))``."""
    return np.log(np.maximum(x, floor))


@numba.njit(nogil=True)
def _banded_power(spec, lo, n, w, out):  # type: ignore[no-untyped-def]
    """out[t, m] = sum_j |spec[t, lo[m] + j]|^2 * w[m, j] for j < n[m], in
    that order (re*re + im*im, as np.square(re) + np.square(im))."""
    for t in range(out.shape[0]):
        for m in range(out.shape[1]):
            acc = 0.0
            for j in range(n[m]):
                z = spec[t, lo[m] + j]
                acc += (z.real * z.real + z.imag * z.imag) * w[m, j]
            out[t, m] = acc
    return out


class BandedFilters:
    """Mel power ``|spec|^2 @ filters`` over each filter's non-zero band only.

    The 128 slaney triangles of a 201-bin spectrum hold 394 non-zeros of 25,728
    (at most 9 bins each), so the dense float64 product spends its time on
    zeros (and OpenBLAS's threads on each other: 8 ms for 10 s of audio on 2
    cores; this kernel: under 1 ms, with no power array in between).  The sums
    run in one fixed order per frame, so a frame's value does not depend on
    how many frames one call computes.
    """

    def __init__(self, filters: np.ndarray) -> None:
        bins, mels = filters.shape
        spans = [np.flatnonzero(filters[:, m]) for m in range(mels)]
        self._lo = np.array([s[0] if len(s) else 0 for s in spans], np.int64)
        self._n = np.array([s[-1] + 1 - s[0] if len(s) else 0 for s in spans], np.int64)
        self._w = np.zeros((mels, max(int(self._n.max()), 1)))
        for m, s in enumerate(spans):
            if len(s):
                self._w[m, : self._n[m]] = filters[s[0] : s[-1] + 1, m]

    def __call__(self, spec: np.ndarray) -> np.ndarray:
        """float64 mel power [frames, n_mels] of a complex spectrum [frames, bins]."""
        out = np.empty((len(spec), len(self._lo)))
        return _banded_power(
            np.ascontiguousarray(spec), self._lo, self._n, self._w, out
        )
