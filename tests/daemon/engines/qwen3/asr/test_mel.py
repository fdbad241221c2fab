"""The numpy log-mel against transformers' WhisperFeatureExtractor (upstream's
feature extractor), whole and streamed."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.qwen3.asr.mel import MelStream, mel_filters
from daemon.engines.qwen3.asr.params import MelParams

transformers = pytest.importorskip("transformers")

MEL = MelParams(
    n_mels=128, n_fft=400, hop_length=160, sampling_rate=16000,
    chunk_frames=100, chunk_tokens=13, window_chunks=4,
)  # fmt: skip
#: the mel parity bound against upstream's features
TOLERANCE = 1e-5
#: WhisperFeatureExtractor.__call__ takes its float32 torch path when torch is
#: importable; that path is itself 2-3e-5 off the float64 result at a few
#: low-power bins (its numpy path and a float64 torch.stft agree with ours <1e-7)
TORCH_FLOAT32_TOLERANCE = 5e-5


def _fe():
    from transformers import WhisperFeatureExtractor

    return WhisperFeatureExtractor(
        feature_size=MEL.n_mels, sampling_rate=MEL.sampling_rate,
        hop_length=MEL.hop_length, n_fft=MEL.n_fft,
    )  # fmt: skip


def speechy(n: int, seed: int = 0) -> np.ndarray:
    """A modulated tone with noise: energy that varies over the clip."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / MEL.sampling_rate
    x = 0.3 * np.sin(2 * np.pi * 300 * t) * np.sin(2 * np.pi * 1.3 * t)
    return (x + 0.01 * rng.standard_normal(n)).astype(np.float32)


def whole(x: np.ndarray, chunk: int | None = None) -> np.ndarray:
    mel = MelStream(MEL)
    step = chunk or max(len(x), 1)
    for i in range(0, len(x), step):
        mel.push(x[i : i + step])
    mel.finish()
    return mel.features(0, mel.frames, 1.0, mel.log_max(1.0))


def test_filters_equal_transformers() -> None:
    np.testing.assert_allclose(mel_filters(400, 128, 16000), _fe().mel_filters,
                               atol=1e-12)  # fmt: skip


# 180 samples: under half a window (reflected twice); 0.3 s and 0.99 s are
# shorter than one 100-frame chunk
@pytest.mark.parametrize("n", [180, 4800, 15840, 16000, 16123, 37937, 80000])
def test_features_equal_whisper(n: int) -> None:
    fe, x = _fe(), speechy(n)
    ours = whole(x)
    ref = fe._np_extract_fbank_features(x[None], "cpu")[0].T
    assert ours.shape == ref.shape == (n // MEL.hop_length, MEL.n_mels)
    assert np.abs(ours - ref).max() <= TOLERANCE
    if n <= MEL.n_fft // 2:
        return  # torch's reflect pad refuses what numpy reflects twice
    call = fe(x, sampling_rate=16000, return_tensors="np", padding=True,
              truncation=False, return_attention_mask=True)  # fmt: skip
    assert call["attention_mask"].sum() == len(ours)
    assert np.abs(ours - call["input_features"][0].T).max() <= TORCH_FLOAT32_TOLERANCE


@pytest.mark.parametrize("chunk", [1, 160, 333, 4000])
def test_streamed_frames_equal_whole(chunk: int) -> None:
    x = speechy(16000 * 2 + 91, seed=1)
    n = 4000 if chunk == 1 else len(x)  # sample by sample: a short clip
    np.testing.assert_array_equal(whole(x[:n], chunk), whole(x[:n]))


def test_frames_settle_before_the_end() -> None:
    mel = MelStream(MEL)
    mel.push(speechy(16000))
    # frame t waits for n_fft/2 samples after its centre: (16000 - 200) // 160 + 1
    assert mel.frames == 99
    mel.finish()
    assert mel.frames == 100


def test_truncate_equals_a_fresh_stream() -> None:
    x = speechy(40000, seed=2)
    mel = MelStream(MEL)
    mel.push(x)
    mel.truncate(23456)
    mel.finish()
    got = mel.features(0, mel.frames, 1.0, mel.log_max(1.0))
    np.testing.assert_array_equal(got, whole(x[:23456]))


def test_scale_is_the_scaled_audio() -> None:
    """Features of unscaled powers with ``scale`` equal those of scaled audio
    (upstream divides the samples by the peak)."""
    x = speechy(20000, seed=3) * 5
    mel = MelStream(MEL)
    mel.push(x)
    mel.finish()
    s = 1 / mel.peak
    ref = _fe()._np_extract_fbank_features((x * np.float32(s))[None], "cpu")[0].T
    got = mel.features(0, mel.frames, s, mel.log_max(s))
    assert np.abs(got - ref).max() <= TOLERANCE
