"""The x-vector front end against upstream: resampling, downmix, mel, buckets."""

from __future__ import annotations

import librosa
import numpy as np
import pytest
import torch

from daemon.engines.qwen3.tts.sizes import XVectorParams
from daemon.engines.qwen3.tts.xvector import (
    MelFrontEnd,
    bucket_of,
    frames_of,
    loudest,
    min_frames,
    mono,
    reflect_index,
    speaker_feeds,
)
from daemon.sdk.audio.resample import resample
from daemon.sdk.bundles.manifest import BundleError
from scripts.qwen3.tts.upstream import import_qwen_tts

RATE = 24000
#: upstream extract_speaker_embedding's mel_spectrogram arguments
UPSTREAM_MEL = dict(n_fft=1024, num_mels=128, sampling_rate=RATE, hop_size=256,
                    win_size=1024, fmin=0, fmax=12000)  # fmt: skip
X = XVectorParams(sample_rate=RATE, n_fft=1024, hop=256, win=1024, pad=384,
                  n_mels=128, fmin=0, fmax=12000, frame_buckets=(282, 94, 188),
                  dim=64, reflect_pad=4)  # fmt: skip


@pytest.fixture(scope="module")
def front() -> MelFrontEnd:
    basis = librosa.filters.mel(sr=RATE, n_fft=1024, n_mels=128, fmin=0, fmax=12000)
    return MelFrontEnd(X, basis)


def upstream_mel(pcm: np.ndarray) -> np.ndarray:
    fn = import_qwen_tts().modeling.mel_spectrogram
    return fn(torch.from_numpy(pcm)[None], **UPSTREAM_MEL)[0].T.numpy()


def broadband(n: int, seed: int = 0) -> np.ndarray:
    """Noise plus a tone: every mel bin well above the log floor."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / RATE
    x = rng.uniform(-0.3, 0.3, n) + 0.3 * np.sin(2 * np.pi * 440 * t)
    return x.astype(np.float32)


def voiced(n: int, seed: int = 0) -> np.ndarray:
    """A gliding harmonic source, gated: speech-like valleys of ~100 dB."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / RATE
    phase = 2 * np.pi * np.cumsum(120 + 30 * np.sin(2 * np.pi * 0.7 * t)) / RATE
    x = sum(np.sin(k * phase) / k for k in range(1, 30)) * 0.2
    gate = (np.sin(2 * np.pi * 1.3 * t) > -0.2) * np.clip(
        np.sin(4.2 * np.pi * t) + 1, 0, 1
    )
    return (x * gate + rng.normal(0, 1e-4, n)).astype(np.float32)


@pytest.mark.parametrize("n", [24000, 24000 * 2 + 77, 1000])
def test_mel_equals_upstream(front: MelFrontEnd, n: int) -> None:
    pcm = broadband(n)
    ref = upstream_mel(pcm)
    ours = front(pcm)
    assert ours.shape == ref.shape == (frames_of(n, X), 128)
    assert ours.dtype == np.float32
    assert np.abs(ours - ref).max() <= 1e-5


def test_mel_is_upstreams_math_where_float32_torch_rounds(front: MelFrontEnd) -> None:
    """In ~100 dB valleys upstream's float32 STFT rounds (measured 4e-4 at most,
    mean 6e-6); the same ops in float64 torch equal ours exactly."""
    pcm = voiced(RATE * 3)
    y = torch.from_numpy(pcm.astype(np.float64))[None, None]
    y = torch.nn.functional.pad(y, (384, 384), mode="reflect")[0]
    window = torch.hann_window(1024, dtype=torch.float64)
    spec = torch.stft(y, 1024, hop_length=256, win_length=1024, window=window,
                      center=False, return_complex=True)  # fmt: skip
    mag = torch.sqrt(torch.view_as_real(spec).pow(2).sum(-1) + 1e-9)
    basis = torch.from_numpy(front._basis_t.T.copy())
    ref64 = torch.log(torch.clamp(basis @ mag, min=1e-5))[0].T.numpy()
    ours = front(pcm)
    assert np.abs(ours - ref64.astype(np.float32)).max() <= 1e-6
    upstream = upstream_mel(pcm)
    assert np.abs(ours - upstream).mean() <= 1e-5
    assert np.abs(ours - upstream).max() <= 1e-3


@pytest.mark.parametrize("rate", [8000, 16000, 22050, 44100, 48000])
def test_resampling_equals_librosa(rate: int) -> None:
    """upstream create_voice_clone_prompt resamples with librosa (soxr_hq)."""
    pcm = broadband(rate * 2 + 13, seed=rate)
    ref = librosa.resample(y=pcm, orig_sr=rate, target_sr=RATE)
    ours = resample(pcm, rate, RATE)
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    assert np.array_equal(ours, ref)


def test_same_rate_is_untouched() -> None:
    pcm = broadband(500)
    assert np.array_equal(resample(pcm, RATE, RATE), pcm)


def test_mono_averages_the_last_axis_as_upstream() -> None:
    stereo = np.stack([np.ones(10), -np.ones(10) * 0.5], axis=-1)
    assert np.allclose(mono(stereo), 0.25) and mono(stereo).dtype == np.float32
    with pytest.raises(ValueError, match="samples, channels"):
        mono(np.zeros((2, 3, 4)))


@pytest.mark.parametrize("n", [385, 512, 24000, 24000 + 255, 48131])
def test_frames_of_counts_upstreams_frames(n: int) -> None:
    assert frames_of(n, X) == len(upstream_mel(broadband(n))) == n // 256


def test_bucket_is_the_smallest_that_holds_the_clip() -> None:
    assert bucket_of(5 * 256, X) == 94  # the encoder's shortest clip
    assert bucket_of(94 * 256, X) == 94
    assert bucket_of(94 * 256 + 255, X) == 94  # still 94 frames
    assert bucket_of(95 * 256, X) == 188
    assert bucket_of(188 * 256 - 1, X) == 188
    assert bucket_of(188 * 256, X) == 188
    assert bucket_of(RATE * 60, X) == 282  # cut to the largest


def test_too_short_clip_names_the_minimum() -> None:
    """5 frames: the widest conv reflects 4 frames (upstream raises below)."""
    assert min_frames(X) == 5
    bucket_of(5 * 256, X)
    with pytest.raises(ValueError, match=r"0\.053 s; cloning needs at least 0\.053 s"):
        bucket_of(5 * 256 - 1, X)


@pytest.mark.parametrize("frames", [5, 6, 9, 50, 94])
def test_reflect_index_is_torchs_reflect_padding(frames: int) -> None:
    """Every conv's window over the index is torch's reflect pad of the clip."""
    bucket, pad = 94, 4
    index = reflect_index(frames, bucket, pad)
    assert index.dtype == np.int32 and index.shape == (bucket + 2 * pad,)
    assert index.min() >= 0 and index.max() < frames
    x = torch.arange(frames, dtype=torch.float64)[None, None]
    for p in (1, 2, 3, 4):
        want = torch.nn.functional.pad(x, (p, p), mode="reflect")[0, 0].numpy()
        window = index[pad - p : pad + frames + p]
        assert np.array_equal(window, want.astype(np.int32)), p


def test_speaker_feeds_pad_and_mark_the_clip() -> None:
    mel = np.random.default_rng(0).normal(size=(50, 128)).astype(np.float32)
    feeds = speaker_feeds(mel, 94, 4)
    assert feeds["mel"].shape == (1, 94, 128) and feeds["mel"].dtype == np.float32
    assert np.array_equal(feeds["mel"][0, :50], mel) and not feeds["mel"][0, 50:].any()
    assert feeds["valid"].tolist() == [[1.0] * 50 + [0.0] * 44]
    assert np.array_equal(feeds["reflect"], reflect_index(50, 94, 4))


def test_bad_mel_basis_is_a_bundle_error() -> None:
    with pytest.raises(BundleError, match=r"\[128, 513\]"):
        MelFrontEnd(X, np.zeros((80, 513)))


def test_the_cut_is_the_loudest_span_on_hop_steps() -> None:
    speech = broadband(RATE)
    clip = np.concatenate([np.zeros(RATE // 2 + 100, np.float32), speech,
                           np.zeros(RATE // 3, np.float32)])  # fmt: skip
    start = loudest(clip, RATE, 256)
    assert start % 256 == 0 and abs(start - (RATE // 2 + 100)) < 256
    flat = np.ones(3 * RATE, np.float32)
    assert loudest(flat, RATE, 256) == 0  # the earliest of equals
    assert loudest(speech, RATE, 256) == 0 == loudest(speech[:100], RATE, 256)
