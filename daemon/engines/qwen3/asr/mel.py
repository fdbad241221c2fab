"""Whisper's log-mel, streamed: upstream's features within 1e-5.

Upstream's processor runs transformers' ``WhisperFeatureExtractor`` on the whole
16 kHz utterance (docs/qwen3.md, ASR front end): periodic Hann window, centred STFT with
reflect padding, power spectrum, slaney mel filters over 0-8 kHz, the last frame
dropped, ``log10(max(mel, 1e-10))``, a floor at the utterance's max - 8, then (x + 4) /
4.  The STFT, its streamed frames and the filters are the SDK's
(daemon/sdk/audio/stft.py, mel.py); what is Whisper's own is here.

A frame is final once ``n_fft / 2`` samples follow its centre (the reflect pad
at the end is needed only by the last frames, computed at ``finish``).  This
module keeps each frame's unscaled mel power; :meth:`MelStream.features` turns
frames into features with the scale (upstream's peak division, audio.py) and
the floor of whatever the utterance is at that moment, so the caller can tell
when a window encoded earlier saw another floor or scale and must be redone.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.engines.qwen3.asr.params import MelParams
from daemon.sdk.audio.mel import BandedFilters, slaney_filters
from daemon.sdk.audio.stft import PERIODIC_HANN, FrameStream, Rows, Stft

#: transformers mel_filter_bank(..., min_frequency=0.0, max_frequency=8000.0)
MEL_MIN_HZ: Final = 0.0
MEL_MAX_HZ: Final = 8000.0
#: spectrogram(..., mel_floor=1e-10) before log10
MEL_FLOOR: Final = 1e-10
#: WhisperFeatureExtractor: floor at max - 8, then (x + 4) / 4
DYNAMIC_RANGE: Final = 8.0
OFFSET: Final = 4.0
SCALE: Final = 4.0


def mel_filters(n_fft: int, n_mels: int, rate: int) -> np.ndarray:
    """Whisper's slaney filters [n_fft // 2 + 1, n_mels] (float64)."""
    return slaney_filters(n_fft, n_mels, rate, MEL_MIN_HZ, MEL_MAX_HZ)


def stft_of(p: MelParams) -> Stft:
    """transformers' ``spectrogram(center=True, pad_mode="reflect")`` with
    ``window_function(n_fft, "hann")`` (periodic)."""
    return Stft(p.n_fft, p.hop_length, pad=p.n_fft // 2, kind=PERIODIC_HANN)


class MelStream:
    """One utterance's 16 kHz samples in, final mel frames out as they settle."""

    def __init__(self, p: MelParams) -> None:
        self.p = p
        self._stft = stft_of(p)
        self._filters = BandedFilters(mel_filters(p.n_fft, p.n_mels, p.sampling_rate))
        self._x = FrameStream(self._stft)
        self._power = Rows(p.n_mels, np.float64)  # unscaled mel power per frame
        self._frame_peak = Rows(None, np.float64)  # each frame's largest power
        self.finished = False

    @property
    def samples(self) -> int:
        return self._x.samples

    @property
    def frames(self) -> int:
        """Frames settled so far (all of them once finished: samples // hop)."""
        return self._power.n

    @property
    def peak(self) -> float:
        """The largest |sample| so far (upstream's peak, for ``peak_scale``)."""
        x = self._x.audio
        return float(np.max(np.abs(x))) if len(x) else 0.0

    def push(self, x: np.ndarray) -> None:
        if self.finished:
            raise RuntimeError("push after finish")
        self._x.push(x)
        n = self._x.samples
        # Whisper drops the centred STFT's last frame: n // hop frames in all
        self._compute(min(self._stft.settled(n), n // self.p.hop_length))

    def finish(self) -> None:
        """The rest of the frames, with the end reflected (the last one dropped)."""
        self.finished = True
        self._compute(self._x.samples // self.p.hop_length)

    def truncate(self, samples: int) -> None:
        """Forget everything from sample ``samples`` on (a cut the segmenter
        chose), keeping the frames that did not reach past it."""
        self._x.truncate(samples)
        keep = min(self._stft.settled(samples), samples // self.p.hop_length)
        self._power.truncate(keep)
        self._frame_peak.truncate(keep)

    @property
    def audio(self) -> np.ndarray:
        """The samples so far (a view: valid until the next push)."""
        return self._x.audio

    def tail(self, start: int) -> np.ndarray:
        """A copy of the samples from ``start`` on."""
        return self._x.audio[start:].copy()

    def _compute(self, stop: int) -> None:
        start = self._power.n
        if stop <= start:
            return
        mel = self._filters(self._x.spectrum(start, stop))
        self._power.append(mel)
        self._frame_peak.append(mel.max(axis=-1))

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
