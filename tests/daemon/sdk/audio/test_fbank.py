"""kaldi_fbank against kaldi-native-fbank (PyPI, the oracle extra), Kaldi's
compute-fbank-feats in C++ with the options upstream's sv.py uses."""

from __future__ import annotations

import kaldi_native_fbank as knf
import numpy as np
import pytest

from daemon.sdk.audio.fbank import (
    LOG_FLOOR,
    MEL_BINS,
    frames_of,
    kaldi_fbank,
    mel_banks,
)
from scripts.common.parity import rel_error

#: fbank parity with upstream within 1e-5 (relative: both sides are float32 at the
#: end, and log energies of near-silent bins carry float32 rounding)
MAX_REL_ERR = 1e-5


def knf_fbank(x: np.ndarray) -> np.ndarray:
    """fbank(wav, num_mel_bins=80, sample_frequency=16000, dither=0)."""
    opts = knf.FbankOptions()
    opts.frame_opts.samp_freq = 16000
    opts.frame_opts.dither = 0.0
    opts.mel_opts.num_bins = MEL_BINS
    fb = knf.OnlineFbank(opts)
    fb.accept_waveform(16000, x.tolist())
    fb.input_finished()
    return np.stack([fb.get_frame(i) for i in range(fb.num_frames_ready)])


def _clip(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(16000 * seconds)) / 16000
    x = sum(0.3 / k * np.sin(2 * np.pi * 120 * k * t + k) for k in range(1, 10))
    x = x + 0.02 * rng.standard_normal(t.size) + 0.05  # and a DC offset
    x[t.size // 4 : t.size // 3] *= 1e-3
    return x.astype(np.float32)


@pytest.mark.parametrize("seconds", [0.03, 3.0, 10.0])
def test_matches_kaldi_native_fbank(seconds: float) -> None:
    x = _clip(seconds)
    want = knf_fbank(x)
    got = kaldi_fbank(x)
    assert got.shape == want.shape == (frames_of(x.size), MEL_BINS)
    assert got.dtype == np.float32
    assert rel_error(reference=want, test=got) <= MAX_REL_ERR


def test_silence_is_the_log_floor() -> None:
    got = kaldi_fbank(np.zeros(16000, np.float32))
    np.testing.assert_allclose(got, np.log(LOG_FLOOR))
    np.testing.assert_allclose(knf_fbank(np.zeros(16000, np.float32)), got, rtol=1e-6)


def test_mel_banks_are_kaldi_triangles() -> None:
    banks = mel_banks()
    assert banks.shape == (MEL_BINS, 257)
    assert (banks[:, -1] == 0).all() and (banks >= 0).all() and banks.max() <= 1
    assert frames_of(160000) == 998 and frames_of(399) == 0


@pytest.mark.parametrize(
    ("audio", "message"),
    [
        (np.zeros((1, 4000), np.float32), "mono"),
        (np.zeros(399, np.float32), "shorter than one"),
        (np.full(4000, np.inf, np.float32), "NaN or infinite"),
    ],
)
def test_bad_audio_is_refused(audio: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        kaldi_fbank(audio)
