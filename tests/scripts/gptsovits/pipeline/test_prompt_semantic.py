"""Exact prompt tokens at build (--hubert): upstream's reading and HuBERT path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scripts.gptsovits.pipeline import prompt_semantic as ps


def _write_wav(path: Path, audio: np.ndarray, rate: int = 32000) -> None:
    import soundfile as sf

    sf.write(str(path), audio, rate, subtype="FLOAT")


def test_hubert_clip_is_librosa_load_16k(tmp_path: Path) -> None:
    """upstream: librosa.load(path, sr=16000): stereo mixed down, soxr_hq."""
    import librosa

    rng = np.random.default_rng(0)
    stereo = (0.2 * rng.standard_normal((32000, 2))).astype(np.float32)
    _write_wav(tmp_path / "a.wav", stereo)
    want = librosa.resample(
        stereo.mean(1), orig_sr=32000, target_sr=16000, res_type="soxr_hq"
    )
    got = ps.hubert_clip(tmp_path / "a.wav")
    assert got.dtype == np.float32 and len(got) == 16000
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_hubert_prompt_is_upstreams(  # type: ignore[no-untyped-def]
    sovits_model, tmp_path: Path
) -> None:
    import torch

    from scripts.gptsovits.export.hubert import load_hubert
    from scripts.gptsovits.models.hubert import reference_tokens
    from scripts.gptsovits.synthetic.hubert import write_tiny_hubert

    hubert = load_hubert(write_tiny_hubert(tmp_path / "hubert"))
    t = np.arange(int(3.3 * 32000)) / 32000
    _write_wav(tmp_path / "ref.wav", (0.3 * np.sin(2 * np.pi * 150 * t)).astype("f4"))
    got = ps.hubert_prompt(tmp_path / "ref.wav", hubert, sovits_model)
    wav = np.concatenate([ps.hubert_clip(tmp_path / "ref.wav"), np.zeros(9600, "f4")])
    want = reference_tokens(hubert, sovits_model, torch.from_numpy(wav)).numpy()
    assert got.dtype == np.int32 and len(got) == (3.3 + 0.6) * 25 // 1
    np.testing.assert_array_equal(got, want)
    _write_wav(tmp_path / "short.wav", np.zeros(2 * 32000, "f4"))
    with pytest.raises(ps.ReferenceLengthError, match="2.00 s at 16 kHz is outside"):
        ps.hubert_prompt(tmp_path / "short.wav", hubert, sovits_model)
