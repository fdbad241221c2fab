"""Whisper's log-mel in numpy, streamed: upstream's features within 1e-5.

Upstream's processor runs transformers' ``WhisperFeatureExtractor`` on the whole
16 kHz utterance (docs/qwen3.md, ASR front end): periodic Hann window, centred STFT with
reflect padding, power spectrum, slaney mel filters over 0-8 kHz, the last frame
dropped, ``log10(max(mel, 1e-10))``, a floor at the utterance's max - 8, then (x + 4) /
4.

A frame is final once ``n_fft / 2`` samples follow its centre (the reflect pad
at the end is needed only by the last frames, computed at ``finish``).  This
module keeps each frame's unscaled mel power; :meth:`MelStream.features` turns
frames into features with the scale (upstream's peak division, audio.py) and
the floor of whatever the utterance is at that moment, so the caller can tell
when a window encoded earlier saw another floor or scale and must be redone.
"""

from __future__ import annotations

from typing import Final

import numba
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from daemon.engines.qwen3.asr.params import MelParams

#: transformers mel_filter_bank(..., min_frequency=0.0, max_frequency=8000.0)
MEL_MIN_HZ: Final = 0.0
MEL_MAX_HZ: Final = 8000.0
#: spectrogram(..., mel_floor=1e-10) before log10
MEL_FLOOR: Final = 1e-10
#: WhisperFeatureExtractor: floor at max - 8, then (x + 4) / 4
DYNAMIC_RANGE: Final = 8.0
OFFSET: Final = 4.0
SCALE: Final = 4.0
# Slaney's mel scale (librosa/transformers "slaney"): linear below 1 kHz, log above.
_SLANEY_F_SP: Final = 200.0 / 3.0
_SLANEY_MIN_LOG_HZ: Final = 1000.0
_SLANEY_LOGSTEP: Final = 27.0 / np.log(6.4)


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    hz = np.atleast_1d(np.asarray(hz, np.float64))
    mel = hz / _SLANEY_F_SP
    min_log_mel = _SLANEY_MIN_LOG_HZ / _SLANEY_F_SP
    log = hz >= _SLANEY_MIN_LOG_HZ
    mel[log] = min_log_mel + np.log(hz[log] / _SLANEY_MIN_LOG_HZ) * _SLANEY_LOGSTEP
    return mel


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, np.float64)
    hz = mel * _SLANEY_F_SP
    min_log_mel = _SLANEY_MIN_LOG_HZ / _SLANEY_F_SP
    log = mel >= min_log_mel
    hz[log] = _SLANEY_MIN_LOG_HZ * np.exp((mel[log] - min_log_mel) / _SLANEY_LOGSTEP)
    return hz


def mel_filters(n_fft: int, n_mels: int, rate: int) -> np.ndarray:
    """Slaney-normalised triangular filters [n_fft // 2 + 1, n_mels] (float64)."""
    fft_hz = np.linspace(0, rate // 2, n_fft // 2 + 1)
    edges = _mel_to_hz(
        np.linspace(_hz_to_mel(MEL_MIN_HZ)[0], _hz_to_mel(MEL_MAX_HZ)[0], n_mels + 2)
    )
    width = np.diff(edges)
    slopes = edges[None, :] - fft_hz[:, None]
    down = -slopes[:, :-2] / width[:-1]
    up = slopes[:, 2:] / width[1:]
    bank = np.maximum(0.0, np.minimum(down, up))
    return bank * (2.0 / (edges[2 : n_mels + 2] - edges[:n_mels]))[None, :]


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
    how many frames one push computes.
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


def periodic_hann(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)


class _Rows:
    """A growable float array of rows (amortised appends, views out)."""

    def __init__(self, width: int | None, dtype: type) -> None:
        shape = (1024,) if width is None else (64, width)
        self._a = np.zeros(shape, dtype)
        self.n = 0

    def append(self, rows: np.ndarray) -> None:
        need = self.n + len(rows)
        if need > len(self._a):
            grown = np.zeros((max(need, 2 * len(self._a)), *self._a.shape[1:]),
                             self._a.dtype)  # fmt: skip
            grown[: self.n] = self._a[: self.n]
            self._a = grown
        self._a[self.n : need] = rows
        self.n = need

    def view(self) -> np.ndarray:
        return self._a[: self.n]

    def truncate(self, n: int) -> None:
        self.n = min(self.n, n)


class MelStream:
    """One utterance's 16 kHz samples in, final mel frames out as they settle."""

    def __init__(self, p: MelParams) -> None:
        self.p = p
        self._half = p.n_fft // 2
        self._window = periodic_hann(p.n_fft)
        self._taps = np.arange(p.n_fft)[None, :]
        self._filters = BandedFilters(mel_filters(p.n_fft, p.n_mels, p.sampling_rate))
        self._x = _Rows(None, np.float32)
        self._power = _Rows(p.n_mels, np.float64)  # unscaled mel power per frame
        self._frame_peak = _Rows(None, np.float64)  # each frame's largest power
        self.finished = False

    @property
    def samples(self) -> int:
        return self._x.n

    @property
    def frames(self) -> int:
        """Frames settled so far (all of them once finished: samples // hop)."""
        return self._power.n

    @property
    def peak(self) -> float:
        """The largest |sample| so far (upstream's peak, for ``peak_scale``)."""
        x = self._x.view()
        return float(np.max(np.abs(x))) if len(x) else 0.0

    def push(self, x: np.ndarray) -> None:
        if self.finished:
            raise RuntimeError("push after finish")
        self._x.append(np.asarray(x, np.float32))
        n, hop = self._x.n, self.p.hop_length
        # frame t is final when t * hop + n_fft / 2 <= n (no end reflection)
        ready = (n - self._half) // hop + 1 if n >= self._half else 0
        self._compute(min(ready, n // hop))

    def finish(self) -> None:
        """The rest of the frames, with the end reflected (the last one dropped)."""
        self.finished = True
        self._compute(self._x.n // self.p.hop_length)

    def truncate(self, samples: int) -> None:
        """Forget everything from sample ``samples`` on (a cut the segmenter
        chose), keeping the frames that did not reach past it."""
        self._x.truncate(samples)
        keep = (samples - self._half) // self.p.hop_length + 1
        keep = max(0, min(keep, samples // self.p.hop_length))
        self._power.truncate(keep)
        self._frame_peak.truncate(keep)

    @property
    def audio(self) -> np.ndarray:
        """The samples so far (a view: valid until the next push)."""
        return self._x.view()

    def tail(self, start: int) -> np.ndarray:
        """A copy of the samples from ``start`` on."""
        return self._x.view()[start:].copy()

    def _compute(self, stop: int) -> None:
        start = self._power.n
        if stop <= start:
            return
        n, hop, half = self._x.n, self.p.hop_length, self._half
        # Frames whose taps all lie inside the samples are strided views; only
        # the few at either end need the reflected gather (10 s: 4 of 1000).
        lo = min(max(start, -(-half // hop)), stop)
        hi = max(lo, min(stop, (n - half) // hop + 1))
        windowed = np.empty((stop - start, self.p.n_fft))
        for a, b in ((start, lo), (lo, hi), (hi, stop)):
            if a < b:
                part = self._inside(a, b) if (a, b) == (lo, hi) else self._edge(a, b)
                np.multiply(part, self._window, out=windowed[a - start : b - start])
        mel = self._filters(np.fft.rfft(windowed, axis=-1))
        self._power.append(mel)
        self._frame_peak.append(mel.max(axis=-1))

    def _inside(self, start: int, stop: int) -> np.ndarray:
        """float32 taps [stop - start, n_fft] of frames inside the samples."""
        hop, half = self.p.hop_length, self._half
        x = self._x.view()[start * hop - half : (stop - 1) * hop + half]
        return sliding_window_view(x, self.p.n_fft)[::hop]

    def _edge(self, start: int, stop: int) -> np.ndarray:
        """float32 taps of frames reaching past either end, reflected there
        (np.pad mode="reflect", as the centred STFT pads): one gather."""
        x = self._x.view()
        n, hop, half = len(x), self.p.hop_length, self._half
        idx = (np.arange(start, stop) * hop - half)[:, None] + self._taps
        np.abs(idx, out=idx)
        over = idx > n - 1
        idx[over] = 2 * (n - 1) - idx[over]
        if idx.min() < 0:  # shorter than half a window: reflect again
            padded = np.pad(x, half, mode="reflect")
            idx = (np.arange(start, stop) * hop)[:, None] + self._taps
            return padded[idx]
        return x[idx]

    def log_max(self, scale: float) -> float:
        """max over the settled frames of log10(max(mel * scale^2, floor))."""
        peaks = self._frame_peak.view()
        top = float(peaks.max()) if len(peaks) else 0.0
        return float(np.log10(max(top * scale * scale, MEL_FLOOR)))

    def features(
        self, start: int, stop: int, scale: float, log_max: float
    ) -> np.ndarray:
        """float32 features [stop - start, n_mels] of settled frames, for audio
        multiplied by ``scale`` and an utterance whose log-mel max is ``log_max``."""
        mel = self._power.view()[start:stop] * (scale * scale)
        log = np.log10(np.maximum(mel, MEL_FLOOR))
        log = np.maximum(log, log_max - DYNAMIC_RANGE)
        return ((log + OFFSET) / SCALE).astype(np.float32)
