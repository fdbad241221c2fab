"""The tiny Qwen3-ASR checkpoint loads as upstream loads a real one."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("qwen_asr")

#: What a Qwen/Qwen3-ASR-0.6B download holds (save_pretrained names).
CHECKPOINT_FILES = {
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "preprocessor_config.json",
    "chat_template.jinja",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "merges.txt",
}


def test_the_directory_holds_the_files_a_real_checkpoint_has(
    tiny_asr_model: Path,
) -> None:
    names = {p.name for p in tiny_asr_model.iterdir()}
    assert CHECKPOINT_FILES <= names


def test_upstream_auto_classes_load_it_with_the_contract_dims(
    tiny_asr_model: Path,
) -> None:
    import qwen_asr.inference.qwen3_asr  # noqa: F401  (registers the Auto classes)
    from transformers import AutoConfig, AutoModel, AutoProcessor

    config = AutoConfig.from_pretrained(tiny_asr_model)
    audio = config.thinker_config.audio_config
    text = config.thinker_config.text_config
    assert (audio.d_model, audio.encoder_layers, audio.encoder_attention_heads) == (
        64,
        2,
        4,
    )
    assert (audio.n_window, audio.n_window_infer, audio.num_mel_bins) == (50, 400, 128)
    assert audio.output_dim == text.hidden_size == 64
    assert (text.num_hidden_layers, text.num_attention_heads) == (2, 4)
    assert (text.num_key_value_heads, text.head_dim) == (2, 16)
    assert sum(text.rope_scaling["mrope_section"]) == text.head_dim // 2

    processor = AutoProcessor.from_pretrained(tiny_asr_model)
    tok = processor.tokenizer
    assert text.vocab_size == len(tok)
    assert config.thinker_config.audio_token_id == tok.convert_tokens_to_ids(
        processor.audio_token
    )
    assert processor.feature_extractor.feature_size == audio.num_mel_bins

    model = AutoModel.from_pretrained(tiny_asr_model)
    assert type(model).__name__ == "Qwen3ASRForConditionalGeneration"
    norm = model.thinker.model.norm.weight
    assert not bool((norm == 1).all())  # perturbed, not the init's ones


def test_asr_text_survives_decoding_and_the_specials_do_not(
    tiny_asr_model: Path,
) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_asr_model)
    ids = tok.encode("language English<asr_text>你好 hello<|im_end|>")
    text = tok.decode(ids, skip_special_tokens=True)
    assert text == "language English<asr_text>你好 hello"


def test_the_tokenizer_json_alone_round_trips_english_and_chinese(
    tiny_asr_model: Path,
) -> None:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tiny_asr_model / "tokenizer.json"))
    sample = "今天天气很好, the quick brown fox"
    assert tok.decode(tok.encode(sample).ids) == sample


def test_the_same_seed_writes_the_same_bytes(
    tiny_asr_model: Path, tmp_path: Path
) -> None:
    from scripts.qwen3.asr.tiny import write_tiny_model

    again = write_tiny_model(tmp_path / "again", seed=0)
    for path in sorted(tiny_asr_model.iterdir()):
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name


def test_the_odd_shape_loads_in_upstream_padded_and_with_moved_ids(
    tiny_asr_odd_model: Path,
) -> None:
    """ODD: odd widths upstream's config takes, the special tokens first and
    reversed, and LM-head rows the tokenizer never gives."""
    from scripts.qwen3.asr import oracle
    from scripts.qwen3.asr.tiny import ODD, ODD_PADDING, SPECIAL_TOKENS

    model, processor = oracle.load(tiny_asr_odd_model)
    tok, thinker = processor.tokenizer, model.config.thinker_config
    text = thinker.text_config
    assert (text.hidden_size, text.intermediate_size, text.head_dim) == (45, 53, 14)
    assert text.num_attention_heads * text.head_dim != text.hidden_size
    assert thinker.audio_config.num_mel_bins == ODD.audio["num_mel_bins"] == 97
    assert text.vocab_size == len(tok) + ODD_PADDING
    assert model.thinker.lm_head.weight.shape[0] == text.vocab_size
    ids = [tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS]
    assert ids == list(range(len(SPECIAL_TOKENS)))[::-1]
    assert thinker.audio_token_id == ids[SPECIAL_TOKENS.index("<|audio_pad|>")]
    sample = "language Chinese<asr_text>今天天气很好 the quick brown fox<|im_end|>"
    assert max(tok.encode(sample)) < len(tok)
    assert tok.decode(tok.encode(sample), skip_special_tokens=True) == sample[:-10]
