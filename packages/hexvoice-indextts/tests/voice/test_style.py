"""The CAM++ input as upstream makes it (torchaudio's Kaldi fbank less its
mean over time), the bucket choice and the refusals of clips it cannot take."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchaudio

from hexvoice_indextts.voice.frames import bucket_for
from hexvoice_indextts.voice.style import MAX_FRAMES, bucket_inputs, style_features


def upstream_features(audio16k: np.ndarray, dtype: torch.dtype) -> np.ndarray:
    """infer_v2._get_speaker_conditioning's CAM++ input."""
    wav = torch.from_numpy(audio16k).to(dtype)[None]
    feat = torchaudio.compliance.kaldi.fbank(
        wav, num_mel_bins=80, dither=0, sample_frequency=16000
    )
    return (feat - feat.mean(dim=0, keepdim=True)).numpy()


@pytest.mark.parametrize("samples", [1601, 16000 * 2 + 37])
def test_features_are_upstreams(samples: int) -> None:
    g = np.random.default_rng(samples)
    audio = (0.3 * g.standard_normal(samples)).clip(-1, 1)
    ours = style_features(audio)
    exact = upstream_features(audio, torch.float64)
    upstream = upstream_features(audio.astype(np.float32), torch.float32)
    assert ours.dtype == np.float32 and ours.shape == exact.shape
    floor = np.abs(upstream - exact).max()
    assert np.abs(ours - exact).max() <= max(floor, 1e-6), (
        np.abs(ours - exact).max(),
        floor,
    )


def test_a_15_s_clip_fits_the_largest_bucket() -> None:
    assert MAX_FRAMES == 1498
    assert bucket_for(1498, (512, 1024, 1498), "frames") == 1498
    assert bucket_for(513, (1498, 512, 1024), "frames") == 1024


def test_clips_it_cannot_take_are_refused() -> None:
    with pytest.raises(
        ValueError, match=r"CAM\+\+ needs at least 3 \(720 samples at 16 kHz\)"
    ):
        style_features(np.zeros(700))
    with pytest.raises(
        ValueError, match="fbank frames: 1499, the largest bucket holds 1498"
    ):
        bucket_for(1499, (512, 1498), "speaker clip: fbank frames")


def test_bucket_inputs_put_the_frames_first_and_mark_them() -> None:
    feat = np.arange(3 * 80, dtype=np.float32).reshape(3, 80)
    inputs = bucket_inputs(feat, 8)
    assert inputs["fbank"].shape == (1, 8, 80) and inputs["mask"].shape == (1, 8)
    assert (inputs["fbank"][0, :3] == feat).all() and not inputs["fbank"][0, 3:].any()
    assert inputs["mask"].tolist() == [[1, 1, 1, 0, 0, 0, 0, 0]]
