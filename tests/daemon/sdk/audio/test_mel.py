"""Mel filter banks: slaney against librosa (transformers' Whisper bank:
tests/daemon/engines/qwen3/asr/test_mel.py; Kaldi's: gptsovits/reference/
test_fbank.py), and the banded product against the dense one."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.audio.mel import (
    BandedFilters,
    floored_log,
    kaldi_filters,
    kaldi_mel,
    slaney_filters,
)


@pytest.mark.parametrize(
    ("n_fft", "n_mels", "rate", "fmax"),
    [(400, 128, 16000, 8000), (1024, 128, 24000, 12000)],
)
def test_slaney_equals_librosa(n_fft: int, n_mels: int, rate: int, fmax: float) -> None:
    librosa = pytest.importorskip("librosa")
    want = librosa.filters.mel(
        sr=rate, n_fft=n_fft, n_mels=n_mels, fmin=0.0, fmax=fmax, dtype=np.float64
    )
    got = slaney_filters(n_fft, n_mels, rate, 0.0, fmax)
    assert got.shape == want.T.shape
    np.testing.assert_allclose(got, want.T, rtol=1e-10, atol=1e-14)


def test_kaldi_triangles_climb_the_mel_scale() -> None:
    banks = kaldi_filters(512, 80, 16000, 20.0, 8000.0)
    assert banks.shape == (80, 257) and not banks[:, -1].any()
    assert banks.min() == 0.0 and banks.max() <= 1.0
    # every bank holds a bin; their peaks climb the mel scale (the narrow low
    # banks may share a bin)
    assert banks.max(axis=1).min() > 0
    centres = kaldi_mel(16000 / 512 * np.argmax(banks, axis=1))
    assert np.all(np.diff(centres) >= 0) and centres[-1] > 2700


def test_floored_log() -> None:
    assert floored_log(np.array([0.0, np.e]), 1e-5).tolist() == [np.log(1e-5), 1.0]


def test_banded_filters_are_the_dense_product_frame_by_frame() -> None:
    filters = slaney_filters(400, 128, 16000, 0.0, 8000.0)
    rng = np.random.default_rng(3)
    spec = rng.standard_normal((257, 201)) + 1j * rng.standard_normal((257, 201))
    banded = BandedFilters(filters)(spec)
    dense = (np.square(spec.real) + np.square(spec.imag)) @ filters
    assert np.abs(banded - dense).max() <= 1e-14 * np.abs(dense).max()
    # a frame's value is the same whatever block it is computed in
    assert np.array_equal(BandedFilters(filters)(spec[100:103]), banded[100:103])
