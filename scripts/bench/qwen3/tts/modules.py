"""Upstream's Qwen3-TTS modules at a bench's :class:`~.sizes.Dims`, with
upstream's random init: the talker (with its code predictor), the 12 Hz codec
decoder and the speaker encoder.  :func:`check` holds sizes.py's parameter
counts against them; calib.py compiles them, and
scripts/bench/latency_model/full_size/qwen3.py exports them at full size."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scripts.bench.qwen3.sizes_common import mrope_section, numel
from scripts.bench.qwen3.tts import sizes
from scripts.bench.qwen3.tts.sizes import GROUPS, Dims


def talker(d: Dims, layers: int, predictor_layers: int = 1) -> Any:
    """Qwen3TTSTalkerForConditionalGeneration of ``layers`` talker layers and
    ``predictor_layers`` code-predictor layers at ``d``'s widths; a token text
    table (the CPU holds the real one), no speakers or languages."""
    from scripts.qwen3.tts.upstream import import_qwen_tts

    qt = import_qwen_tts()
    t, p = d.talker, d.predictor
    cfg = qt.configuration.Qwen3TTSTalkerConfig(
        num_hidden_layers=layers,
        hidden_size=t.hidden,
        num_attention_heads=t.heads,
        num_key_value_heads=t.kv_heads,
        head_dim=t.head_dim,
        intermediate_size=t.intermediate,
        vocab_size=t.vocab,
        text_hidden_size=d.text_hidden,
        text_vocab_size=8,
        num_code_groups=GROUPS,
        rope_scaling={
            "rope_type": "default",
            "interleaved": True,
            "mrope_section": mrope_section(t.head_dim),
        },
        spk_id={},
        spk_is_dialect={},
        codec_language_id={},
        code_predictor_config={
            "num_hidden_layers": predictor_layers,
            "hidden_size": p.hidden,
            "num_attention_heads": p.heads,
            "num_key_value_heads": p.kv_heads,
            "head_dim": p.head_dim,
            "intermediate_size": p.intermediate,
            "vocab_size": p.vocab,
            "num_code_groups": GROUPS,
        },
    )
    return qt.modeling.Qwen3TTSTalkerForConditionalGeneration(cfg)


def codec_decoder(d: Dims) -> Any:
    """The 12 Hz codec decoder at ``d.codec`` (ASSUMED config, sizes.py)."""
    from scripts.qwen3.tts.upstream import import_qwen_tts

    qt = import_qwen_tts()
    cfg = qt.codec_configuration.Qwen3TTSTokenizerV2DecoderConfig(**d.codec)
    return qt.codec_modeling.Qwen3TTSTokenizerV2Decoder(cfg)


def speaker_encoder(d: Dims) -> Any:
    """The x-vector speaker encoder at ``d.speaker`` (upstream's defaults)."""
    from scripts.qwen3.tts.upstream import import_qwen_tts

    qt = import_qwen_tts()
    cfg = qt.configuration.Qwen3TTSSpeakerEncoderConfig(**d.speaker)
    return qt.modeling.Qwen3TTSSpeakerEncoder(cfg)


def check(d: Dims) -> dict[str, int]:
    """Build upstream's modules (one layer per stack; the whole codec decoder
    and speaker encoder) and compare with sizes.py's counts: returns the codec
    and speaker parameter counts; ValueError if a count differs."""
    t, p = d.talker, d.predictor
    model = talker(d, layers=1, predictor_layers=1)
    cp = model.code_predictor
    one = replace(d, talker=replace(t, layers=1), predictor=replace(p, layers=1))
    have = {
        "talker": numel(model.model.layers, model.model.norm, model.codec_head),
        "predictor": numel(
            cp.model.layers, cp.model.norm, cp.lm_head, cp.small_to_mtp_projection
        ),
        "text_proj": numel(model.text_projection),
        "codec_emb": numel(model.model.codec_embedding),
        "cp_emb": numel(cp.model.codec_embedding),
    }
    tables = sizes.cpu_tables(one)
    want = {
        "talker": sizes.talker_params(one),
        "predictor": sizes.predictor_params(one),
        "text_proj": sizes.text_proj_params(one),
        "codec_emb": tables["cpu/codec_embedding.npy"],
        "cp_emb": tables["cpu/cp_embedding.npy"],
    }
    if have != want:
        raise ValueError(f"parameter counts {want} != upstream's {have}")
    del model, cp
    return {"codec": numel(codec_decoder(d)), "speaker": numel(speaker_encoder(d))}
