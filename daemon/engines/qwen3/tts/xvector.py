"""The Base checkpoint's x-vector: a reference clip's mel through ``speaker_<F>``.

Upstream (docs/qwen3.md, x-vector mel): ``create_voice_clone_prompt`` takes the clip
mono (mean over the last axis) as float32, resamples it to 24 kHz with
``librosa.resample`` (librosa 0.11: res_type "soxr_hq", then ``fix_length``
to ceil(n * ratio) samples), and ``extract_speaker_embedding`` runs
``mel_spectrogram``: reflect pad (n_fft - hop) / 2 = 384 on both sides, STFT
with a periodic Hann window and center=False, magnitude sqrt(re² + im² +
1e-9), the librosa slaney mel basis (the bundle's cpu/mel_basis.npy, computed
at build time so the runtime needs no librosa), natural log of clamp(1e-5);
then the speaker encoder on [1, frames, 128].  The same steps here by the
SDK's log-mel (daemon/sdk/audio/log_mel.py, float64; upstream runs float32
torch, which this equals within its rounding).

A ``speaker_<F>`` graph takes any clip of 1 + reflect_pad .. F frames: the
mel of the whole clip (upstream's frames, its reflect padding at the clip's
true end included) zero-padded to F, ``valid`` marking its frames and
``reflect`` the frames upstream's reflect-padded convs read past either end
(scripts/qwen3/tts/graphs/speaker.py), which gives upstream's embedding of the
clip itself.  The bucket is the smallest that holds the clip.  A clip longer
than the largest bucket is cut to that bucket's F * hop samples (with center
False and that padding, n samples make n // hop frames): the loudest such span
(on hop steps), so a recording's leading or trailing silence is what goes,
not speech; the embedding is upstream's of that span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.qwen3.tts.graphio import speaker_io
from daemon.engines.qwen3.tts.params import speaker_key
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.audio.log_mel import LogMel
from daemon.sdk.audio.resample import resample
from daemon.sdk.audio.stft import PERIODIC_HANN, Stft
from daemon.sdk.bundles.manifest import BundleError

if TYPE_CHECKING:
    from daemon.engines.qwen3.tts.params import TtsParams, XVectorParams
    from daemon.sdk.cancel import CancelToken
    from daemon.sdk.graphs import Runner


def mono(audio: np.ndarray) -> np.ndarray:
    """float32 [n]: upstream's downmix of [n, channels] (mean over the last
    axis, ``_normalize_audio_inputs``); [n] stays."""
    a = np.asarray(audio)
    if a.ndim == 2:
        a = a.mean(axis=-1)
    if a.ndim != 1:
        raise ValueError(
            f"a clip must be [samples] or [samples, channels], got "
            f"{list(np.shape(audio))}"
        )
    return a.astype(np.float32)


def stft_of(x: XVectorParams) -> Stft:
    """mel_spectrogram's STFT: center False after a reflect pad of ``x.pad``;
    torch.hann_window(win) is periodic, centred in n_fft when shorter."""
    return Stft(x.n_fft, x.hop, pad=x.pad, win=x.win, kind=PERIODIC_HANN)


def frames_of(samples: int, x: XVectorParams) -> int:
    """Mel frames of ``samples`` (center False, reflect pad ``x.pad``)."""
    return stft_of(x).frames_of(samples)


def min_frames(x: XVectorParams) -> int:
    """The shortest mel the graphs take: torch's reflect padding of the
    widest conv needs more frames than it pads (upstream raises below)."""
    assert x.reflect_pad is not None
    return x.reflect_pad + 1


def bucket_of(samples: int, x: XVectorParams) -> int:
    """The smallest frame bucket holding a 24 kHz clip of ``samples`` (the
    largest when none does: the clip is cut to it); ValueError naming the
    shortest clip when it is too short for the encoder."""
    frames = frames_of(samples, x)
    if frames < min_frames(x):
        shortest = min_frames(x) * x.hop / x.sample_rate
        raise ValueError(
            f"qwen3-tts: the clip is {samples / x.sample_rate:.3f} s; cloning "
            f"needs at least {shortest:.3f} s"
        )
    return next((f for f in x.frame_buckets if f >= frames), x.frame_buckets[-1])


def reflect_index(frames: int, bucket: int, pad: int) -> np.ndarray:
    """int32 [bucket + 2 pad]: entry j is the frame torch's reflect padding
    puts at frame j - pad of a ``frames``-long input; past frames + pad (read
    by padded frames only) any valid frame."""
    t = np.abs(np.arange(-pad, bucket + pad))
    t = np.where(t > frames - 1, 2 * (frames - 1) - t, t)
    return np.clip(t, 0, frames - 1).astype(np.int32)


def speaker_feeds(mel: np.ndarray, bucket: int, pad: int) -> dict[str, np.ndarray]:
    """speaker_<bucket>'s inputs for a log-mel [n, n_mels], n <= bucket: the
    mel zero-padded, ``valid`` 1 on its n frames, ``reflect``."""
    n = len(mel)
    padded = np.zeros((1, bucket, mel.shape[1]), np.float32)
    padded[0, :n] = mel
    valid = np.zeros((1, bucket), np.float32)
    valid[0, :n] = 1.0
    return {"mel": padded, "valid": valid, "reflect": reflect_index(n, bucket, pad)}


def loudest(pcm: np.ndarray, length: int, step: int) -> int:
    """Start (a multiple of ``step``) of the ``length``-sample span of ``pcm``
    with the most energy; the earliest of equals."""
    if len(pcm) <= length:
        return 0
    energy = np.concatenate([[0.0], np.cumsum(np.square(pcm, dtype=np.float64))])
    starts = np.arange(0, len(pcm) - length + 1, step)
    return int(starts[np.argmax(energy[starts + length] - energy[starts])])


class MelFrontEnd(LogMel):
    """upstream ``mel_spectrogram`` for 24 kHz float32 samples."""

    def __init__(self, x: XVectorParams, mel_basis: np.ndarray) -> None:
        bins = x.n_fft // 2 + 1
        if mel_basis.shape != (x.n_mels, bins):
            raise BundleError(
                f"qwen3-tts: mel basis is {list(mel_basis.shape)}, expected "
                f"[{x.n_mels}, {bins}] (n_mels, n_fft/2 + 1)"
            )
        super().__init__(stft_of(x), mel_basis)
        self.x = x


class XVector:
    """The ``speaker_<F>`` graphs and their front end."""

    def __init__(
        self, p: TtsParams, graphs: Mapping[str, Runner], mel_basis: np.ndarray
    ) -> None:
        if p.xvector is None:
            raise BundleError(
                "qwen3-tts: this bundle has no speaker encoder (kind custom_voice)"
            )
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
        """The shortest clip the encoder takes (min_frames)."""
        return min_frames(self.x) * self.x.hop / self.x.sample_rate

    @property
    def max_seconds(self) -> float:
        """Clips longer than this are cut to it (the largest bucket)."""
        return self.buckets[-1] * self.x.hop / self.x.sample_rate

    def bucket(self, samples: int) -> int:
        return bucket_of(samples, self.x)

    def prepare(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        """The 24 kHz mono float32 clip, cut to the largest bucket if longer."""
        return self.cut(audio, sample_rate)[0]

    def cut(self, audio: np.ndarray, sample_rate: int) -> tuple[np.ndarray, int]:
        """(the 24 kHz mono float32 clip, whole or its loudest largest-bucket
        span, and that span's first sample in the 24 kHz clip)."""
        pcm = resample(mono(audio), sample_rate, self.x.sample_rate)
        bucket = self.bucket(len(pcm))
        if frames_of(len(pcm), self.x) <= bucket:
            return pcm, 0
        n = bucket * self.x.hop
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
        """float32 [D] of a log-mel [n, n_mels], min_frames <= n <= the
        largest bucket: run in the smallest bucket holding it."""
        n, x = len(mel), self.x
        if not min_frames(x) <= n <= self.buckets[-1]:
            raise ValueError(
                f"qwen3-tts: {n} mel frames; the speaker graphs take "
                f"{min_frames(x)}..{self.buckets[-1]}"
            )
        frames = next(f for f in self.buckets if f >= n)
        graph = self._graphs[frames]
        if cancel is not None:
            cancel.check()
        b = graph.bind()
        assert x.reflect_pad is not None
        for name, value in speaker_feeds(mel, frames, x.reflect_pad).items():
            b[name][...] = value
        graph.execute()
        self.calls += 1
        return np.array(b["xvec"][0], np.float32)
