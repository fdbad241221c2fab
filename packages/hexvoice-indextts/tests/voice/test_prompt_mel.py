"""The prompt mel equals upstream's s2mel mel_spectrogram (infer_v2's
mel_fn) on clips of odd lengths; the basis is librosa's; fmax's quirk."""

from __future__ import annotations

import librosa
import numpy as np
import pytest
import torch
from indextts.s2mel.modules.audio import mel_spectrogram

from hexvoice_indextts.model_dir.config import Preprocess, SpectParams
from hexvoice_indextts.tiny.model import tiny_config
from hexvoice_indextts.voice.prompt_mel import fmax_of, mel_basis, prompt_mel


def preprocess(fmax: object = "None") -> Preprocess:
    p = tiny_config()["s2mel"]["preprocess_params"]
    return Preprocess(p["sr"], SpectParams(**{**p["spect_params"], "fmax": fmax}))


def upstream(audio: np.ndarray, p: Preprocess) -> np.ndarray:
    s = p.spect_params
    fmax = None if s.fmax == "None" else 8000  # infer_v2's mel_fn arguments
    mel = mel_spectrogram(
        torch.from_numpy(audio)[None], s.n_fft, s.n_mels, p.sr, s.hop_length,
        s.win_length, s.fmin, fmax,
    )  # fmt: skip
    return mel[0].T.numpy()


@pytest.mark.parametrize("samples", [513, 22050 + 77, 22050 * 3 + 1])
def test_the_mel_is_upstreams(samples: int) -> None:
    p = preprocess()
    audio = (0.2 * np.random.default_rng(samples).standard_normal(samples)).astype(
        np.float32
    )
    ours = prompt_mel(p, mel_basis(p))(audio)
    theirs = upstream(audio, p)
    assert ours.shape == theirs.shape
    # upstream's float32 rounding: measured 5e-7 to 1e-6 at log-mels up to ~4
    assert np.abs(ours - theirs).max() < 1e-5


@pytest.mark.parametrize("fmax", ["None", 11025, None])
def test_the_basis_is_librosas_and_fmax_follows_upstreams_quirk(fmax: object) -> None:
    p = preprocess(fmax)
    s = p.spect_params
    want = librosa.filters.mel(
        sr=p.sr, n_fft=s.n_fft, n_mels=s.n_mels, fmin=s.fmin,
        fmax=None if fmax == "None" else 8000,
    )  # fmt: skip
    assert fmax_of(p) == (11025 if fmax == "None" else 8000)
    assert np.abs(mel_basis(p) - want).max() < 1e-7
