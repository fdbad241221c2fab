"""The Qwen3-TTS model and codec directories are checked before any model
loads: every missing file or key is named with its file; every id, speaker and
language is the file's (never a code default); build_tts_qwen3 exits 1 saying
what is wrong."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from scripts.qwen3.tts.build import main as build_tts
from scripts.qwen3.tts.pipeline.source import ModelDirError, read_model_dir


@pytest.fixture
def model_copy(tiny_tts_custom: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_tts_custom, tmp_path / "model"))


def _edit(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _talker(d: dict) -> dict:
    return d["talker_config"]


def test_every_id_speaker_and_language_is_the_files(tiny_tts_custom: Path):
    """Read back against config.json itself: the tiny checkpoint's ids differ
    from upstream's code defaults, so a default leaking in would show."""
    cfg = json.loads((tiny_tts_custom / "config.json").read_text())
    t = cfg["talker_config"]
    src = read_model_dir(tiny_tts_custom)
    assert src.kind == "custom_voice"
    assert src.talker.special_ids() == {k: t[k] for k in src.talker.special_ids()}
    assert src.talker.codec_eos_token_id != 4198  # upstream's code default
    assert src.config.text_ids() == {k: cfg[k] for k in src.config.text_ids()}
    assert src.talker.spk_id == t["spk_id"] and len(src.talker.spk_id) >= 3
    assert any(v for v in src.talker.spk_is_dialect.values())
    assert src.talker.codec_language_id == t["codec_language_id"]
    gen = json.loads((tiny_tts_custom / "generation_config.json").read_text())
    assert src.generation.given() == {k: v for k, v in gen.items()
                                      if k in src.generation.given()}  # fmt: skip
    assert src.codec_root == tiny_tts_custom / "speech_tokenizer"
    assert src.codec.decoder_config.codebook_size == src.predictor.vocab_size
    names = {p.relative_to(tiny_tts_custom).as_posix() for p in src.all_files}
    assert {"config.json", "generation_config.json", "tokenizer_config.json",
            "model.safetensors", "speech_tokenizer/config.json",
            "speech_tokenizer/model.safetensors",
            "speech_tokenizer/preprocessor_config.json"} <= names  # fmt: skip


def test_base_needs_its_speaker_encoder(tiny_tts_base: Path, tmp_path: Path):
    src = read_model_dir(tiny_tts_base)
    assert src.kind == "base" and src.talker.spk_id == {}
    assert src.config.speaker_encoder_config.enc_dim == src.talker.hidden_size
    copy = Path(shutil.copytree(tiny_tts_base, tmp_path / "base"))
    _edit(copy / "config.json", lambda d: d.pop("speaker_encoder_config"))
    with pytest.raises(ModelDirError, match="speaker_encoder_config: expected the "
                       "speaker encoder of a base checkpoint"):  # fmt: skip
        read_model_dir(copy)


@pytest.mark.parametrize(
    "remove,message",
    [
        ("generation_config.json", "{root}: no generation_config.json (a Qwen3-TTS "
         "12 Hz model directory has one)"),
        ("model.safetensors", "{root}: no weights: neither model.safetensors nor "
         "model.safetensors.index.json"),
        ("speech_tokenizer/model.safetensors", "{root}/speech_tokenizer: no "
         "weights: neither model.safetensors nor model.safetensors.index.json"),
        ("speech_tokenizer/preprocessor_config.json", "{root}/speech_tokenizer: no "
         "preprocessor_config.json (a Qwen3-TTS 12 Hz codec (speech_tokenizer) "
         "directory has one)"),
    ],
)  # fmt: skip
def test_a_missing_file_is_named(model_copy: Path, remove: str, message: str):
    (model_copy / remove).unlink()
    with pytest.raises(ModelDirError) as refused:
        read_model_dir(model_copy)
    assert str(refused.value) == message.format(root=model_copy)


def test_tokenizer_json_or_the_bpe_files(model_copy: Path):
    (model_copy / "tokenizer.json").unlink(missing_ok=True)
    assert read_model_dir(model_copy)  # vocab.json + merges.txt: converted
    (model_copy / "merges.txt").unlink()
    with pytest.raises(ModelDirError, match="missing merges.txt"):
        read_model_dir(model_copy)


@pytest.mark.parametrize(
    "file,change,message",
    [
        ("config.json", lambda d: _talker(d).pop("codec_eos_token_id"),
         "talker_config.codec_eos_token_id: expected an integer >= 0, found "
         "nothing (missing field)"),
        ("config.json", lambda d: d.pop("tts_pad_token_id"),
         "tts_pad_token_id: expected an integer >= 0, found nothing (missing "
         "field)"),
        ("config.json", lambda d: _talker(d).update(codec_bos_id=5),
         "talker_config.codec_bos_id: expected an id in [128, 1152) (the top 1024 "
         "of vocab_size), found 5"),
        ("config.json", lambda d: _talker(d)["spk_is_dialect"].update(
            aiden="klingon_dialect"),
         "talker_config.spk_is_dialect.aiden: expected false or a key of "
         "codec_language_id"),
        ("config.json", lambda d: _talker(d)["code_predictor_config"].pop(
            "head_dim"),
         "talker_config.code_predictor_config.head_dim: expected an integer > 0, "
         "found nothing (missing field)"),
        ("config.json", lambda d: d.update(tts_model_type="voice_design"),
         "tts_model_type: expected one of ['base', 'custom_voice'], found "
         "'voice_design'"),
        ("generation_config.json", lambda d: d.update(top_k="many"),
         "top_k: expected an integer >= 0 or null, found 'many'"),
        ("speech_tokenizer/config.json",
         lambda d: d["decoder_config"].update(num_quantizers=8),
         "decoder_config.num_quantizers: expected one of [16], found 8"),
    ],
    ids=["eos", "tts_pad", "bos-range", "dialect", "cp-head-dim", "kind",
         "top-k", "quantizers"],
)  # fmt: skip
def test_a_missing_or_wrong_key_is_named_with_its_file(
    model_copy: Path, file: str, change, message: str
):
    _edit(model_copy / file, change)
    with pytest.raises(ModelDirError) as refused:
        read_model_dir(model_copy)
    assert str(refused.value).startswith(f"{model_copy / file}: {message}")


def test_the_codec_must_be_this_models(model_copy: Path, tmp_path: Path):
    codec = Path(shutil.copytree(model_copy / "speech_tokenizer", tmp_path / "c"))
    _edit(codec / "config.json",
          lambda d: d["decoder_config"].update(codebook_size=256))  # fmt: skip
    with pytest.raises(ModelDirError) as refused:
        read_model_dir(model_copy, codec)
    assert str(refused.value) == (
        f"{codec / 'config.json'}: decoder_config.codebook_size: expected "
        f"{model_copy / 'config.json'}'s code_predictor_config.vocab_size 128 (the "
        "codec of this model), found 256"
    )
    assert read_model_dir(model_copy, model_copy / "speech_tokenizer")


def test_build_exits_1_naming_the_problem(model_copy: Path, tmp_path, capsys):
    (model_copy / "config.json").write_text("{not json")
    code = build_tts([str(model_copy), "--target", "simulator",
                      "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(f"error: {model_copy / 'config.json'}: invalid JSON")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--codec", "{tmp}/nope"], "{tmp}/nope: not a directory (the codec"),
        (["--prefill-buckets", "256", "--kv-buckets", "192"],
         "--kv-buckets: the largest (192) must exceed"),
        # the default windows are 40, 100 and 325 frames
        (["--first-frames", "326"], "--first-frames: expected 1..325 (the largest "
         "codec window), found 326"),
        (["--sim-codec-windows", "100,7"], "--sim-codec-windows: expected frames "
         "of the codec graphs [40, 100, 325], found [100, 7]"),
    ],
)  # fmt: skip
def test_options_and_dirs_are_checked_before_anything_runs(
    tiny_tts_custom: Path, tmp_path: Path, capsys, argv: list[str], message: str
):
    argv = [a.format(tmp=tmp_path) for a in argv]
    code = build_tts([str(tiny_tts_custom), "--target", "simulator", "--out",
                      str(tmp_path / "out"), *argv])  # fmt: skip
    assert code == 1
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
    assert not (tmp_path / "out.work").exists()
