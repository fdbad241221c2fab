"""The tiny Qwen3-TTS checkpoints load as upstream loads real ones, carry their
own special ids, sound, and stop by themselves."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.qwen3_fixtures import require_qwen_tts

require_qwen_tts()

#: What a Qwen3-TTS-12Hz-0.6B-* download holds (save_pretrained names).
CHECKPOINT_FILES = {
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer_config.json",
    "tokenizer.json",
    "vocab.json",
    "merges.txt",
    "speech_tokenizer/config.json",
    "speech_tokenizer/model.safetensors",
    "speech_tokenizer/preprocessor_config.json",
}
FIXTURES = {"custom_voice": "tiny_tts_custom", "base": "tiny_tts_base"}


@pytest.fixture(scope="module", params=["custom_voice", "base"])
def tiny(request: pytest.FixtureRequest) -> tuple[str, Path]:
    return request.param, request.getfixturevalue(FIXTURES[request.param])


def _config(path: Path) -> dict[str, Any]:
    return json.loads((path / "config.json").read_text())


def test_the_directory_holds_what_a_real_checkpoint_has(tiny):
    kind, path = tiny
    names = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
    assert CHECKPOINT_FILES <= names
    cfg = _config(path)
    assert cfg["model_type"] == "qwen3_tts"
    assert cfg["tts_model_type"] == kind
    assert cfg["tokenizer_type"] == "qwen3_tts_tokenizer_12hz"
    assert cfg["tts_model_size"] == "0b6"
    codec = json.loads((path / "speech_tokenizer" / "config.json").read_text())
    assert codec["model_type"] == "qwen3_tts_tokenizer_12hz"
    assert codec["decode_upsample_rate"] == 1920
    assert codec["decoder_config"]["sliding_window"] == 72


def test_special_ids_come_from_the_tokenizer_and_differ_from_code_defaults(tiny):
    from scripts.qwen3.tts import tiny as tiny_mod
    from scripts.qwen3.tts.oracle import load
    from scripts.qwen3.tts.upstream import import_qwen_tts

    _, path = tiny
    cfg = _config(path)
    tok = load(path).processor.tokenizer
    text_ids = {
        "im_start_token_id": "<|im_start|>",
        "im_end_token_id": "<|im_end|>",
        "tts_pad_token_id": "<tts_pad>",
        "tts_bos_token_id": "<tts_text_bos>",
        "tts_eos_token_id": "<tts_text_eod>",
    }
    up = import_qwen_tts().configuration
    for key, token in text_ids.items():
        assert cfg[key] == tok.convert_tokens_to_ids(token), key
        assert cfg[key] != getattr(up.Qwen3TTSConfig(), key), key
    talker = cfg["talker_config"]
    defaults = up.Qwen3TTSTalkerConfig()
    codebook = talker["code_predictor_config"]["vocab_size"]
    assert talker["vocab_size"] == codebook + 1024 == tiny_mod.TALKER_VOCAB
    specials = [
        k for k, v in talker.items() if k.startswith("codec_") and isinstance(v, int)
    ]
    assert len(specials) == 7
    rows = [talker[k] for k in specials]
    rows += [*talker["codec_language_id"].values(), *talker["spk_id"].values()]
    assert len(set(rows)) == len(rows)  # no two specials share a row
    assert all(codebook <= r < talker["vocab_size"] for r in rows)
    for key in specials:
        assert talker[key] != getattr(defaults, key), key
    assert talker["text_vocab_size"] == len(tok)


def test_speakers_languages_and_dims_are_the_contracts(tiny):
    from scripts.qwen3.tts.oracle import load

    kind, path = tiny
    talker = _config(path)["talker_config"]
    languages = talker["codec_language_id"]
    assert {"chinese", "english"} <= set(languages) and len(languages) >= 4
    assert any("dialect" in name for name in languages)
    model = load(path).model
    assert model.get_supported_languages() == [
        "auto",
        *(n for n in languages if "dialect" not in n),
    ]
    predictor = model.talker.code_predictor
    if kind == "custom_voice":
        dialects = {s: d for s, d in talker["spk_is_dialect"].items() if d}
        assert len(talker["spk_id"]) >= 3 and dialects
        assert set(dialects.values()) <= set(languages)
        assert set(talker["spk_is_dialect"]) == set(talker["spk_id"])
        assert model.speaker_encoder is None
        assert type(predictor.small_to_mtp_projection).__name__ == "Identity"
    else:
        assert talker["spk_id"] == {} and model.speaker_encoder is not None
        proj = predictor.small_to_mtp_projection
        assert (proj.in_features, proj.out_features) == (64, 32)
    t = model.config.talker_config
    assert (t.hidden_size, t.num_hidden_layers, t.head_dim, t.text_hidden_size) == (
        64,
        2,
        16,
        48,
    )
    assert (t.num_attention_heads, t.num_key_value_heads, t.num_code_groups) == (
        4,
        2,
        16,
    )
    assert len(predictor.lm_head) == len(predictor.model.codec_embedding) == 15
    assert sum(t.rope_scaling["mrope_section"]) == t.head_dim // 2


def test_generate_defaults_come_from_the_file_and_differ_from_the_hard_ones(tiny):
    from scripts.qwen3.tts.oracle import load
    from scripts.qwen3.tts.tiny import BASE_OMITS, GENERATE_CONFIG, generate_config

    kind, path = tiny
    tts = load(path)
    on_file = json.loads((path / "generation_config.json").read_text())
    assert tts.generate_defaults == on_file == generate_config(kind)
    merged = tts._merge_generate_kwargs()
    hard = {"top_k": 50, "temperature": 0.9, "repetition_penalty": 1.05}
    hard |= {
        "subtalker_top_k": 50,
        "subtalker_temperature": 0.9,
        "max_new_tokens": 2048,
    }
    for key, value in hard.items():
        if kind == "base" and key in BASE_OMITS:
            assert key not in on_file and merged[key] == value  # upstream's default
        else:
            assert merged[key] == GENERATE_CONFIG[key] != value, key


def test_the_prompt_template_tokenizes_to_the_3_role_and_5_tail_tokens(tiny):
    from scripts.qwen3.tts.oracle import load
    from scripts.qwen3.tts.tiny import TEXTS

    tts = load(tiny[1])
    tok = tts.processor.tokenizer
    ids = {t: tok.convert_tokens_to_ids(t) for t in ("<|im_start|>", "<|im_end|>")}
    assistant, newline = tok("assistant")["input_ids"], tok("\n")["input_ids"]
    assert len(assistant) == len(newline) == 1
    role = [ids["<|im_start|>"], *assistant, *newline]
    for text in TEXTS.values():
        row = tts._tokenize_texts([tts._build_assistant_text(text)])[0][0].tolist()
        assert row[:3] == role
        assert row[-5:] == [ids["<|im_end|>"], *newline, *role]
        assert tok.decode(row[3:-5]) == text


def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_weights(tmp_path):
    from scripts.qwen3.tts.tiny import write_tiny_tts

    def digest(path: Path) -> dict[str, str]:
        return {
            p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*"))
            if p.is_file()
        }

    a = digest(write_tiny_tts(tmp_path / "a", "base"))
    assert digest(write_tiny_tts(tmp_path / "b", "base")) == a
    c = digest(write_tiny_tts(tmp_path / "c", "base", seed=1))
    assert c["model.safetensors"] != a["model.safetensors"]
    assert (
        c["speech_tokenizer/model.safetensors"]
        != a["speech_tokenizer/model.safetensors"]
    )
    assert c["config.json"] == a["config.json"]


def test_the_codec_is_audible_and_almost_never_clipped(tiny_tts_base):
    from scripts.qwen3.tts.oracle import load
    from scripts.qwen3.tts.oracle_audio import decode_plain

    codec = load(tiny_tts_base).model.speech_tokenizer
    codes = np.random.default_rng(3).integers(0, 128, (12, 16))
    wav = decode_plain(codec, codes)
    assert wav.shape == (12 * 1920,)
    assert 0.05 < float(wav.std()) < 0.5
    assert float(np.mean(np.abs(wav) >= 0.999)) < 1e-3


@pytest.mark.parametrize(
    ("kind", "text", "language", "voice"),
    [
        ("custom_voice", "en", "english", "serena"),
        ("base", "zh", "chinese", None),
    ],
)
def test_greedy_stops_with_eos_the_step_after_an_eos_code(
    kind, text, language, voice, request
):
    from scripts.qwen3.tts import oracle
    from scripts.qwen3.tts.tiny import EOS_CODES, TEXTS

    path = request.getfixturevalue(FIXTURES[kind])
    run = oracle.greedy(oracle.load(path), TEXTS[text], language, speaker=voice)
    assert run.stopped
    assert 3 <= len(run.codes) < oracle.MAX_NEW_TOKENS - 1
    assert int(run.code0[-2]) in EOS_CODES  # what made EOS win
    # an EOS code at step 0 cannot stop the run: min_new_tokens masks EOS at step 1
    assert not set(run.code0[1:-2].tolist()) & set(EOS_CODES)
