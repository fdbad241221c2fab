"""The tables stage: the CPU arrays, the tokenizer and the bundle's params
(daemon/engines/qwen3/tts/params.py), with the codec windows the windows
stage chose.

CPU arrays (docs/qwen3.md, CPU side): the talker's text_embedding [Vt, Dt] and
codec_embedding [V, Ht], the predictor's 15 input tables [15, Vc, Ht] and, for
Base, the x-vector mel basis [128, 513] (upstream's own librosa slaney call, so
the runtime needs no librosa).  float16 at full size (text_embedding alone is
622 MB in fp16), float32 when the checkpoint is tiny (pipeline/context.py
``tiny``), so the CPU backend runs a test checkpoint bit-exact against
upstream's fp32; ``embedding_dtype`` says which.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from daemon.engines.qwen3.tts import params as layout
from scripts.common.build.stage import Results
from scripts.qwen3.tts.oracle_audio import decoder_of
from scripts.qwen3.tts.pipeline import prompt
from scripts.qwen3.tts.pipeline.context import (
    TEXT_ROWS,
    XVECTOR_MEL,
    BuildContext,
    tiny,
)
from scripts.qwen3.tts.pipeline.options import CodecPlan
from scripts.qwen3.tts.pipeline.source import SAMPLE_RATE, SAMPLES_PER_FRAME

#: additive mask value of the graphs (hexvoice's shapes.MASK_VALUE, docs/qwen3.md,
#: CPU side)
MASK_VALUE: Final = -100.0


@dataclass(frozen=True)
class Tables:
    """The tables' dtype and shapes, and the bundle's params."""

    embedding_dtype: str
    shapes: dict[str, list[int]]
    params: dict[str, Any]


def run(ctx: BuildContext, results: Results) -> Tables:
    # the windows stage's result (stages/schedule.py Windows): its codec plan
    return write_tables(ctx, results["windows"].codec)


def arrays(model: Any) -> dict[str, np.ndarray]:
    """The CPU tables, float32 (write_tables picks their dtype)."""
    talker = model.talker
    cp = talker.code_predictor.model.codec_embedding

    def f32(w: Any) -> np.ndarray:
        return w.detach().float().numpy()

    return {
        layout.TEXT_EMBEDDING: f32(talker.model.text_embedding.weight),
        layout.CODEC_EMBEDDING: f32(talker.model.codec_embedding.weight),
        layout.CP_EMBEDDING: np.stack([f32(t.weight) for t in cp]),
    }


def mel_basis() -> np.ndarray:
    """[n_mels, n_fft/2 + 1]: upstream's librosa_mel_fn call, as its
    mel_spectrogram makes it (float32, as it casts)."""
    from scripts.qwen3.tts.upstream import import_qwen_tts

    m = XVECTOR_MEL
    fn = import_qwen_tts().modeling.librosa_mel_fn
    basis = fn(
        sr=m["sample_rate"],
        n_fft=m["n_fft"],
        n_mels=m["n_mels"],
        fmin=m["fmin"],
        fmax=m["fmax"],
    )
    return np.asarray(basis, np.float32)


def write_tables(ctx: BuildContext, codec: CodecPlan) -> Tables:
    """Write the arrays and text/tokenizer.json under ``ctx.stage``; the params
    (with the measured ``codec`` windows) are the result's."""
    tables = arrays(ctx.model)
    dtype = np.float32 if tiny(ctx.src) else np.float16
    shapes = {}
    for name, table in tables.items():
        path = ctx.stage / name
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, table.astype(dtype))
        shapes[name] = list(table.shape)
    if ctx.src.kind == "base":
        np.save(ctx.stage / layout.MEL_BASIS, mel_basis())
    tok = ctx.stage / layout.TOKENIZER
    tok.parent.mkdir(parents=True, exist_ok=True)
    # the fast tokenizer transformers builds from the checkpoint's files (a
    # vocab.json + merges.txt checkpoint gets converted here, once)
    ctx.tts.processor.tokenizer.backend_tokenizer.save(str(tok))
    name = np.dtype(dtype).name
    return Tables(name, shapes, params(ctx, codec, name))


def params(ctx: BuildContext, codec: CodecPlan, dtype: str) -> dict[str, Any]:
    """``voice.yaml`` params, checked by the engine's own schema."""
    from scripts.qwen3.tts.graphs.predictor import predictor_rope
    from scripts.qwen3.tts.graphs.talker import talker_rope

    src, model = ctx.src, ctx.model
    cls = type(ctx.tts)
    t, cp = src.talker, src.predictor
    rope, cp_rope = talker_rope(model), predictor_rope(model)
    tokenizer = ctx.tts.processor.tokenizer
    rendered = prompt.render_prompt(ctx.tts, tokenizer)
    raw = {
        "kind": src.kind,
        "talker": {
            "hidden": t.hidden_size,
            "head_dim": t.head_size,
            "layers": t.num_hidden_layers,
            "kv_heads": t.num_key_value_heads,
            "vocab": t.vocab_size,
            "rope_theta": rope.theta,
            "attention_scaling": rope.attention_scaling,
        },
        "text": {
            "hidden": t.text_hidden_size,
            "rows": TEXT_ROWS,
            "vocab": t.text_vocab_size,
        },
        "predictor": {
            "hidden": cp.hidden_size,
            "head_dim": cp.head_dim,
            "layers": cp.num_hidden_layers,
            "kv_heads": cp.num_key_value_heads,
            "vocab": cp.vocab_size,
            "rope_theta": cp_rope.theta,
            "attention_scaling": cp_rope.attention_scaling,
            "groups": cp.num_code_groups,
        },
        "prefill_buckets": list(ctx.prefill_buckets),
        "kv_buckets": list(ctx.kv_buckets),
        "tokens": prompt.token_ids(src, tokenizer, rendered["template"]),
        "prompt": rendered,
        "languages": dict(t.codec_language_id),
        "speakers": prompt.speakers(src),
        "sampling": prompt.sampling(src, cls),
        "text_mode": prompt.text_mode(src, cls),
        "embedding_dtype": dtype,
        "codec": {
            "sample_rate": SAMPLE_RATE,
            "samples_per_frame": SAMPLES_PER_FRAME,
            **upstream_chunking(ctx.codec),
            **codec.params(),
        },
        "xvector": _xvector(ctx),
        "mask_value": MASK_VALUE,
    }
    return layout.TtsParams.from_mapping(raw, where="params: ").to_dict()


def upstream_chunking(codec: Any) -> dict[str, int]:
    """chunk_frames / left_context: upstream chunked_decode's own defaults."""
    sig = inspect.signature(decoder_of(codec).chunked_decode).parameters
    return {
        "chunk_frames": int(sig["chunk_size"].default),
        "left_context": int(sig["left_context_size"].default),
    }


def _xvector(ctx: BuildContext) -> dict[str, Any] | None:
    if ctx.src.kind != "base":
        return None
    enc = ctx.src.config.speaker_encoder_config
    assert enc is not None  # source.py: a base checkpoint has one
    if enc.mel_dim != XVECTOR_MEL["n_mels"]:
        raise prompt.PromptError(
            f"{ctx.src.root / 'config.json'}: speaker_encoder_config.mel_dim: "
            f"expected {XVECTOR_MEL['n_mels']} (upstream's extract_speaker_embedding "
            f"mel), found {enc.mel_dim}"
        )
    from scripts.qwen3.tts.graphs.speaker import reflect_pad

    return {
        **XVECTOR_MEL,
        "frame_buckets": list(ctx.xvector_buckets),
        "dim": enc.enc_dim,
        "reflect_pad": reflect_pad(ctx.model),
    }
