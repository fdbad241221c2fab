"""Short-time Fourier transforms as the upstream front ends compute them.

A front end is an :class:`Stft`: frames of ``frame`` samples every ``hop``
(after ``pad`` samples reflected at each end, as ``np.pad(mode="reflect")`` and
torch's reflect padding do), each multiplied by its window (``win`` samples
centred in the frame, as ``torch.stft`` centres a shorter window) and FFT'd at
``n_fft`` (zero-padding a shorter frame at its end, as Kaldi does).  The four
that use it (docs/qwen3.md, ASR front end and x-vector mel; docs/gpt-sovits.md,
reference audio and speaker verification):

- Whisper's log-mel: 400 / hop 160, centred (pad 200), periodic Hann;
- Qwen3-TTS's x-vector mel: 1024 / hop 256, pad 384, ``center=False``;
- GPT-SoVITS's spectrogram: 2048 / hop 640, pad 704, ``center=False``;
- Kaldi's fbank: 400-sample frames FFT'd at 512, hop 160, no padding
  (snip_edges), DC removal and pre-emphasis per frame, Povey window.

Everything runs in float64 (upstream's float32 torch equals it up to its own
rounding).  :class:`FrameStream` makes a centred STFT's frames on a stream, as
they settle.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

#: torch.hann_window(n) (periodic): 0.5 - 0.5 cos(2 pi k / n)
PERIODIC_HANN: Final = "hann"
#: Kaldi's "povey": the symmetric Hann (denominator n - 1) to the 0.85
POVEY: Final = "povey"
POVEY_POWER: Final = 0.85


@cache
def window(kind: str, win: int, frame: int) -> np.ndarray:
    """float64 [frame]: the ``win``-sample window ``kind`` centred in ``frame``
    zeros (read-only: one array per shape)."""
    k = np.arange(win)
    if kind == PERIODIC_HANN:
        w = 0.5 - 0.5 * np.cos(2 * np.pi * k / win)
    elif kind == POVEY:
        w = (0.5 - 0.5 * np.cos(2 * np.pi * k / (win - 1))) ** POVEY_POWER
    else:
        raise ValueError(f"stft: window {kind!r}, expected {PERIODIC_HANN} or {POVEY}")
    lead = (frame - win) // 2
    out = np.zeros(frame)
    out[lead : lead + win] = w
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class Stft:
    """One front end's framing, window and FFT (the module docstring)."""

    n_fft: int
    hop: int
    #: samples reflected at each end before framing (centred: frame // 2)
    pad: int = 0
    #: samples a frame reads (None: n_fft; fewer are zero-padded to n_fft)
    frame: int | None = None
    #: window length (None: the frame; a shorter one is centred in it)
    win: int | None = None
    kind: str = PERIODIC_HANN
    #: Kaldi's per-frame processing: the frame's mean removed, then
    #: pre-emphasis x[i] - k x[i - 1] with the first sample its own previous
    remove_dc: bool = False
    preemphasis: float = 0.0

    @property
    def frame_length(self) -> int:
        return self.n_fft if self.frame is None else self.frame

    @property
    def bins(self) -> int:
        return self.n_fft // 2 + 1

    @property
    def window(self) -> np.ndarray:
        n = self.frame_length
        return window(self.kind, n if self.win is None else self.win, n)

    def frames_of(self, samples: int) -> int:
        """Frames of a clip of ``samples`` (0 when it fills no frame)."""
        padded = samples + 2 * self.pad
        if padded < self.frame_length:
            return 0
        return (padded - self.frame_length) // self.hop + 1

    def settled(self, samples: int) -> int:
        """Frames of a stream of ``samples`` that read no reflected end (their
        values stay when samples follow): 0 when none."""
        return max(0, self.frames_of(samples - self.pad))

    def frames(self, x: np.ndarray) -> np.ndarray:
        """float64 [frames, frame] of mono ``x``, reflect-padded (a view when
        it needs no padding or conversion)."""
        y = np.asarray(x, np.float64)
        if self.pad:
            y = np.pad(y, self.pad, mode="reflect")
        return sliding_window_view(y, self.frame_length)[:: self.hop]

    def spectrum(self, frames: np.ndarray) -> np.ndarray:
        """complex [frames, bins]: the FFT of each frame processed and windowed."""
        if self.remove_dc:
            frames = frames - frames.mean(axis=1, keepdims=True)
        if self.preemphasis:
            previous = np.concatenate([frames[:, :1], frames[:, :-1]], axis=1)
            frames = frames - self.preemphasis * previous
        return np.fft.rfft(frames * self.window, n=self.n_fft, axis=-1)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """complex [frames, bins] of a whole mono clip."""
        return self.spectrum(self.frames(x))


def power(spec: np.ndarray) -> np.ndarray:
    """|X|^2 as re * re + im * im."""
    return spec.real * spec.real + spec.imag * spec.imag


def magnitude(spec: np.ndarray, eps: float) -> np.ndarray:
    """sqrt(re^2 + im^2 + eps) (torch's ``spec.pow(2).sum(-1) + eps``)."""
    return np.sqrt(power(spec) + eps)


class Rows:
    """A growable array of rows (amortised appends, views out)."""

    def __init__(self, width: int | None, dtype: type) -> None:
        shape = (1024,) if width is None else (64, width)
        self._a = np.zeros(shape, dtype)
        self.n = 0

    def append(self, rows: np.ndarray) -> None:
        need = self.n + len(rows)
        if need > len(self._a):
            shape = (max(need, 2 * len(self._a)), *self._a.shape[1:])
            grown = np.zeros(shape, self._a.dtype)
            grown[: self.n] = self._a[: self.n]
            self._a = grown
        self._a[self.n : need] = rows
        self.n = need

    def view(self) -> np.ndarray:
        return self._a[: self.n]

    def truncate(self, n: int) -> None:
        self.n = min(self.n, n)


class FrameStream:
    """A stream's float32 samples and the windowed frames of a padded
    ``Stft`` over them: a frame's taps equal the whole clip's as soon as it
    has settled (``Stft.settled``); the frames past it reflect the end the
    stream has so far (final once it has ended)."""

    def __init__(self, stft: Stft) -> None:
        if stft.remove_dc or stft.preemphasis:
            raise ValueError("stft: a stream takes no per-frame processing")
        self.stft = stft
        self._taps = np.arange(stft.frame_length)[None, :]
        self._x = Rows(None, np.float32)

    @property
    def samples(self) -> int:
        return self._x.n

    @property
    def audio(self) -> np.ndarray:
        """The samples so far (a view: valid until the next push)."""
        return self._x.view()

    def push(self, x: np.ndarray) -> None:
        self._x.append(np.asarray(x, np.float32))

    def truncate(self, samples: int) -> None:
        self._x.truncate(samples)

    def spectrum(self, start: int, stop: int) -> np.ndarray:
        """complex [stop - start, bins] of frames ``start`` .. ``stop``."""
        s = self.stft
        n, hop, pad, frame = self._x.n, s.hop, s.pad, s.frame_length
        # Frames whose taps all lie inside the samples are strided views; only
        # the few at either end need the reflected gather (10 s: 4 of 1000).
        lo = min(max(start, -(-pad // hop)), stop)
        hi = max(lo, min(stop, s.settled(n)))
        windowed = np.empty((stop - start, frame))
        for a, b in ((start, lo), (lo, hi), (hi, stop)):
            if a < b:
                part = self._inside(a, b) if (a, b) == (lo, hi) else self._edge(a, b)
                np.multiply(part, s.window, out=windowed[a - start : b - start])
        return np.fft.rfft(windowed, n=s.n_fft, axis=-1)

    def _inside(self, start: int, stop: int) -> np.ndarray:
        """float32 taps [stop - start, frame] of frames inside the samples."""
        s = self.stft
        first = start * s.hop - s.pad
        x = self._x.view()[first : (stop - 1) * s.hop - s.pad + s.frame_length]
        return sliding_window_view(x, s.frame_length)[:: s.hop]

    def _edge(self, start: int, stop: int) -> np.ndarray:
        """float32 taps of frames reaching past either end, reflected there
        (np.pad mode="reflect"): one gather."""
        x, s = self._x.view(), self.stft
        n = len(x)
        idx = (np.arange(start, stop) * s.hop - s.pad)[:, None] + self._taps
        np.abs(idx, out=idx)
        over = idx > n - 1
        idx[over] = 2 * (n - 1) - idx[over]
        if idx.min() < 0:  # shorter than the padding: reflect again
            padded = np.pad(x, s.pad, mode="reflect")
            idx = (np.arange(start, stop) * s.hop)[:, None] + self._taps
            return padded[idx]
        return x[idx]
