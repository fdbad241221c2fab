"""The Base checkpoint's x-vector: a reference clip's mel through ``speaker_<F>``.

Upstream (qwen3.md §2.5): ``create_voice_clone_prompt`` takes the clip mono
(mean over the last axis) as float32, resamples it to 24 kHz with
``librosa.resample`` (librosa 0.11: res_type "soxr_hq", then ``fix_length``
to ceil(n * ratio) samples), and ``extract_speaker_embedding`` runs
``mel_spectrogram``: reflect pad (n_fft - hop) / 2 = 384 on both sides, STFT
with a periodic Hann window and center=False, magnitude sqrt(re² + im² +
1e-9), the librosa slaney mel basis (the bundle's cpu/mel_basis.npy, computed
at build time so the runtime needs no librosa), natural log of clamp(1e-5);
then the speaker encoder on [1, frames, 128].  The same steps here in numpy
(float64; upstream runs float32 torch, which this equals within its rounding).

The graphs have fixed frame counts, and ECAPA's reflect-padded convs and
attentive pooling make padding inexact, so the clip is cut instead: to the
largest bucket F <= its frames, i.e. F * hop samples (with center False and
that padding, n samples make n // hop frames), which gives exactly upstream's
embedding of the same cut clip.  The cut is the loudest such span (on hop
steps), so a recording's leading or trailing silence is what goes, not speech.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from daemon.engine.ar.bound import BoundGraph
from daemon.engine.audio.resample import resample
from daemon.engine.bundles.manifest import BundleError
from daemon.engines.qwen3tts.graphio import speaker_io
from daemon.engines.qwen3tts.params import speaker_key

if TYPE_CHECKING:
    from daemon.engine.cancel import CancelToken
    from daemon.engine.graphs import Runner
    from daemon.engines.qwen3tts.params import TtsParams, XVectorParams

#: mel_spectrogram: sqrt(re² + im² + 1e-9)
MAGNITUDE_EPS: Final = 1e-9
#: dynamic_range_compression_torch(clip_val=1e-5)
LOG_FLOOR: Final = 1e-5


def mono(audio: np.ndarray) -> np.ndarray:
    """float32 [n]: upstream's downmix of [n, channels] (mean over the last
    axis, ``_normalize_audio_inputs``); [n] stays."""
    a = np.asarray(audio)
    if a.ndim == 2:
        a = a.mean(axis=-1)
    if a.ndim != 1:
        raise ValueError(f"a clip must be [samples] or [samples, channels], got "
                         f"{list(np.shape(audio))}")  # fmt: skip
    return a.astype(np.float32)


def frames_of(samples: int, x: XVectorParams) -> int:
    """Mel frames of ``samples`` (center False, reflect pad ``x.pad``)."""
    padded = samples + 2 * x.pad
    return max(0, (padded - x.n_fft) // x.hop + 1) if padded >= x.n_fft else 0


def bucket_of(samples: int, x: XVectorParams) -> int:
    """The largest frame bucket a 24 kHz clip of ``samples`` fills;
    ValueError naming the shortest clip when it fills none."""
    frames = frames_of(samples, x)
    fits = [f for f in x.frame_buckets if f <= frames]
    if not fits:
        shortest = x.frame_buckets[0] * x.hop / x.sample_rate
        raise ValueError(
            f"qwen3-tts: the clip is {samples / x.sample_rate:.2f} s; cloning "
            f"needs at least {shortest:.2f} s of speech"
        )
    return fits[-1]


def loudest(pcm: np.ndarray, length: int, step: int) -> int:
    """Start (a multiple of ``step``) of the ``length``-sample span of ``pcm``
    with the most energy; the earliest of equals."""
    if len(pcm) <= length:
        return 0
    energy = np.concatenate([[0.0], np.cumsum(np.square(pcm, dtype=np.float64))])
    starts = np.arange(0, len(pcm) - length + 1, step)
    return int(starts[np.argmax(energy[starts + length] - energy[starts])])


class MelFrontEnd:
    """upstream ``mel_spectrogram`` for 24 kHz float32 samples."""

    def __init__(self, x: XVectorParams, mel_basis: np.ndarray) -> None:
        bins = x.n_fft // 2 + 1
        if mel_basis.shape != (x.n_mels, bins):
            raise BundleError(
                f"qwen3-tts: mel basis is {list(mel_basis.shape)}, expected "
                f"[{x.n_mels}, {bins}] (n_mels, n_fft/2 + 1)"
            )
        self.x = x
        self._basis_t = np.ascontiguousarray(mel_basis.T, np.float64)
        n = np.arange(x.win)
        # torch.hann_window(win) is periodic; win < n_fft would be centred
        hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / x.win)
        lead = (x.n_fft - x.win) // 2
        self._window = np.zeros(x.n_fft)
        self._window[lead : lead + x.win] = hann

    def __call__(self, pcm24k: np.ndarray) -> np.ndarray:
        """float32 log-mel [frames, n_mels]."""
        x = self.x
        y = np.asarray(pcm24k, np.float32)
        if len(y) <= x.pad:
            raise ValueError(f"a clip needs more than {x.pad} samples for the mel")
        y = np.pad(y, x.pad, mode="reflect").astype(np.float64)
        taps = sliding_window_view(y, x.n_fft)[:: x.hop]
        spec = np.fft.rfft(taps * self._window, axis=-1)
        mag = np.sqrt(spec.real * spec.real + spec.imag * spec.imag + MAGNITUDE_EPS)
        mel = mag @ self._basis_t
        return np.log(np.maximum(mel, LOG_FLOOR)).astype(np.float32)


class XVector:
    """The ``speaker_<F>`` graphs and their front end."""

    def __init__(
        self, p: TtsParams, graphs: Mapping[str, Runner], mel_basis: np.ndarray
    ) -> None:
        if p.xvector is None:
            raise BundleError("qwen3-tts: this bundle has no speaker encoder "
                              "(kind custom_voice)")  # fmt: skip
        self.p, self.x = p, p.xvector
        self.front = MelFrontEnd(self.x, mel_basis)
        self.buckets = self.x.frame_buckets
        missing = [speaker_key(f) for f in self.buckets if speaker_key(f) not in graphs]
        if missing:
            raise BundleError(f"qwen3-tts: the bundle lacks graphs {missing}")
        self._graphs = {
            f: BoundGraph(graphs[speaker_key(f)], speaker_io(p, f))
            for f in self.buckets
        }
        self.calls = 0

    @property
    def min_seconds(self) -> float:
        """The shortest clip: the smallest bucket's frames."""
        return self.buckets[0] * self.x.hop / self.x.sample_rate

    @property
    def max_seconds(self) -> float:
        """Clips longer than this are cut to it (the largest bucket)."""
        return self.buckets[-1] * self.x.hop / self.x.sample_rate

    def bucket(self, samples: int) -> int:
        return bucket_of(samples, self.x)

    def prepare(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        """The 24 kHz mono float32 clip, cut to its bucket's samples."""
        return self.cut(audio, sample_rate)[0]

    def cut(self, audio: np.ndarray, sample_rate: int) -> tuple[np.ndarray, int]:
        """(the 24 kHz mono float32 cut, its first sample in the 24 kHz clip)."""
        pcm = resample(mono(audio), sample_rate, self.x.sample_rate)
        n = self.bucket(len(pcm)) * self.x.hop
        start = loudest(pcm, n, self.x.hop)
        return pcm[start : start + n], start

    def mel(self, pcm24k: np.ndarray) -> np.ndarray:
        return self.front(pcm24k)

    def embed(
        self,
        audio: np.ndarray,
        sample_rate: int,
        cancel: CancelToken | None = None,
    ) -> np.ndarray:
        """float32 [D]: the x-vector of ``audio`` (mono [n] or [n, ch]) at
        ``sample_rate`` (any rate: resampled to 24 kHz as upstream)."""
        pcm = self.prepare(audio, sample_rate)
        mel = self.mel(pcm)
        return self.embed_mel(mel, cancel)

    def embed_mel(
        self, mel: np.ndarray, cancel: CancelToken | None = None
    ) -> np.ndarray:
        """float32 [D] of a log-mel [F, n_mels] whose F is a bucket."""
        frames = len(mel)
        graph = self._graphs.get(frames)
        if graph is None:
            raise ValueError(f"qwen3-tts: {frames} mel frames is not a bucket "
                             f"{list(self.buckets)}")  # fmt: skip
        if cancel is not None:
            cancel.check()
        b = graph.bind()
        b["mel"][0] = mel
        graph.execute()
        self.calls += 1
        return np.array(b["xvec"][0], np.float32)
