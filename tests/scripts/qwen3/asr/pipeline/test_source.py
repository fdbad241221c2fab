"""The model directory is checked before any model loads: every missing file or
key is named, with the file it belongs in; build_asr exits 1 saying so."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from scripts.qwen3.asr.build import main as build_asr
from scripts.qwen3.asr.pipeline.source import ModelDirError, read_model_dir


@pytest.fixture
def model_copy(tiny_asr_model: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_asr_model, tmp_path / "model"))


def _edit(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _text(d: dict) -> dict:
    return d["thinker_config"]["text_config"]


def test_the_tiny_checkpoint_reads_with_every_file_it_needs(tiny_asr_model: Path):
    src = read_model_dir(tiny_asr_model)
    assert (src.text.hidden_size, src.text.head_dim, src.text.vocab_size) == (
        64,
        16,
        410,
    )
    assert (src.audio.window_chunks, src.features.feature_size) == (4, 128)
    assert src.generation.eos_token_id == (402, 400)
    names = {p.name for p in src.files}
    assert {
        "config.json",
        "tokenizer.json",
        "chat_template.jinja",
        "model.safetensors",
    } <= names


@pytest.mark.parametrize(
    "remove,message",
    [
        (
            "preprocessor_config.json",
            "no preprocessor_config.json (a Qwen3-ASR model directory has one)",
        ),
        (
            "generation_config.json",
            "no generation_config.json (a Qwen3-ASR model directory has one)",
        ),
        (
            "model.safetensors",
            "no weights: neither model.safetensors nor model.safetensors.index.json",
        ),
        (
            "chat_template.jinja",
            "no chat template: neither chat_template.jinja nor "
            "chat_template.json nor chat_template in tokenizer_config.json",
        ),
    ],
)
def test_a_missing_file_is_named(model_copy: Path, remove: str, message: str):
    (model_copy / remove).unlink()
    with pytest.raises(ModelDirError) as refused:
        read_model_dir(model_copy)
    assert str(refused.value) == f"{model_copy}: {message}"


def test_tokenizer_json_or_the_bpe_files(model_copy: Path):
    (model_copy / "tokenizer.json").unlink()
    assert read_model_dir(model_copy)  # vocab.json + merges.txt still there
    (model_copy / "merges.txt").unlink()
    with pytest.raises(ModelDirError, match="missing merges.txt"):
        read_model_dir(model_copy)


@pytest.mark.parametrize(
    "file,change,message",
    [
        (
            "config.json",
            lambda d: _text(d).pop("head_dim"),
            "thinker_config.text_config.head_dim: expected an integer > 0, found "
            "nothing (missing field)",
        ),
        (
            "config.json",
            lambda d: _text(d).update(rope_theta="fast"),
            "thinker_config.text_config.rope_theta: expected a number > 0, found "
            "'fast'",
        ),
        (
            "config.json",
            lambda d: d["thinker_config"]["audio_config"].update(n_window=100),
            "thinker_config.audio_config.n_window: expected 50 (upstream's "
            "100-frame chunks), found 100",
        ),
        (
            "config.json",
            lambda d: d.update(model_type="qwen2_audio"),
            "model_type: expected one of ['qwen3_asr'], found 'qwen2_audio'",
        ),
        (
            "preprocessor_config.json",
            lambda d: d.update(sampling_rate=24000),
            "sampling_rate: expected one of [16000], found 24000",
        ),
        (
            "preprocessor_config.json",
            lambda d: d.update(feature_size=80),
            "feature_size: expected config.json's num_mel_bins 128, found 80",
        ),
    ],
    ids=["missing", "type", "n_window", "model_type", "rate", "mels"],
)
def test_a_missing_or_wrong_key_is_named_with_its_file(
    model_copy: Path, file: str, change, message: str
):
    _edit(model_copy / file, change)
    with pytest.raises(ModelDirError) as refused:
        read_model_dir(model_copy)
    assert str(refused.value) == f"{model_copy / file}: {message}"


def test_build_asr_exits_1_naming_the_problem(model_copy: Path, tmp_path, capsys):
    (model_copy / "config.json").write_text("{not json")
    code = build_asr(
        [str(model_copy), "--target", "simulator", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(f"error: {model_copy / 'config.json'}: invalid JSON")
    assert not (tmp_path / "out").exists()


def test_not_a_directory(tmp_path: Path, capsys):
    code = build_asr(
        [
            str(tmp_path / "nope"),
            "--target",
            "simulator",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 1
    assert "nope: not a directory" in capsys.readouterr().err


def test_buckets_are_checked_before_anything_runs(
    tiny_asr_model: Path, tmp_path, capsys
):
    code = build_asr(
        [
            str(tiny_asr_model),
            "--target",
            "simulator",
            "--out",
            str(tmp_path / "out"),
            "--prefill-buckets",
            "256",
            "--kv-buckets",
            "192",
        ]
    )
    assert code == 1
    assert "--kv-buckets: the largest (192) must exceed" in capsys.readouterr().err
