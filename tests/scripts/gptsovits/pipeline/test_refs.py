"""Reference features: spectrogram, prompt text, training-folder errors."""

from __future__ import annotations

import shutil
import wave
from pathlib import Path

import numpy as np
import pytest

from scripts.gptsovits.export.ref_features import RefFeatures
from scripts.gptsovits.pipeline import refs
from scripts.gptsovits.synthetic.voice import SyntheticVoice, clip_name


def test_linear_spectrogram_shape() -> None:
    audio = np.sin(np.arange(32000) / 10.0).astype(np.float32)
    spec = refs.linear_spectrogram(audio)
    assert tuple(spec.shape) == (1, 1025, 32000 // 640)
    assert float(spec.min()) >= refs.SPEC_EPS**0.5 * 0.99


def test_prompt_text_gets_a_sentence_end() -> None:
    assert refs.prompt_text("你好") == "你好。"
    assert refs.prompt_text("你好.") == "你好."


@pytest.fixture
def logs(synthetic_voice: SyntheticVoice, tmp_path: Path) -> Path:
    dest = tmp_path / "tinyvoice"
    shutil.copytree(synthetic_voice.logs_dir, dest)
    return dest


def test_missing_file_is_named(logs: Path) -> None:
    name = clip_name(logs.name, 0)
    (logs / refs.NAME2SEMANTIC).unlink()
    with pytest.raises(refs.TrainingFolderError, match=f"missing {logs}/6-name2"):
        refs.resolve_clip(logs, name)


def test_unknown_clip_is_named(logs: Path) -> None:
    with pytest.raises(refs.TrainingFolderError, match="5-wav32k/nope.wav"):
        refs.resolve_clip(logs, "nope.wav")


def test_reference_outside_3_to_10_s(logs: Path) -> None:
    name = clip_name(logs.name, 0)
    with wave.open(str(logs / refs.WAV_DIR / name), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(32000)
        f.writeframes(np.zeros(2 * 32000, "<i2").tobytes())
    with pytest.raises(refs.TrainingFolderError, match="2.00 s is outside 3-10 s"):
        refs.reference_features(logs, name, None, None, None, None, 0)


def test_malformed_name2text_is_named(logs: Path) -> None:
    (logs / refs.NAME2TEXT).write_text("only\ttwo\n", encoding="utf-8")
    with pytest.raises(refs.TrainingFolderError, match="2-name2text.txt:1: expected 4"):
        refs.reference_features(
            logs, clip_name(logs.name, 0), None, None, None, None, 0
        )


def test_saved_archive_says_how_the_prompt_was_made(tmp_path: Path) -> None:
    from daemon.engines.gptsovits import layout

    f = RefFeatures(
        "c",
        "t",
        "zh",
        np.zeros(2, np.int32),
        np.zeros((2, 4), np.float32),
        np.zeros(3, np.int32),
        np.zeros((8, 1), np.float32),
        np.zeros((16, 1), np.float32),
        3.0,
        None,
        refs.PROMPT_HUBERT,
    )
    with np.load(f.save(tmp_path / "r.npz")) as z:
        assert str(z[layout.REF_PROMPT_SEMANTIC]) == "hubert"
