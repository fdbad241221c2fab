"""The bundle's params (``voice.yaml``), from the checked model directory and
upstream's loaded model and processor, checked by the engine's own schema
(daemon/engines/qwen3/asr/params.py): the tables stage records them, the gates
drive the graphs with them."""

from __future__ import annotations

import inspect
from typing import Any, Final

from daemon.engines.qwen3.asr import params as layout
from scripts.qwen3.asr import encoder
from scripts.qwen3.asr.pipeline import prompt
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.source import SAMPLE_RATE

#: additive mask value of the graphs (hexvoice's shapes.MASK_VALUE, docs/qwen3.md, CPU
#: side)
MASK_VALUE: Final = -100.0


def upstream_max_new_tokens() -> int:
    """Upstream's default generation budget (Qwen3ASRModel.from_pretrained)."""
    from qwen_asr import Qwen3ASRModel

    sig = inspect.signature(Qwen3ASRModel.from_pretrained)
    return int(sig.parameters["max_new_tokens"].default)


def params(ctx: BuildContext) -> dict[str, Any]:
    """``voice.yaml`` params, checked by the engine's own schema."""
    text, audio, fe = ctx.src.text, ctx.src.audio, ctx.src.features
    rotary = ctx.model.thinker.model.rotary_emb
    raw = {
        "hidden": text.hidden_size,
        "head_dim": text.head_dim,
        "layers": text.num_hidden_layers,
        "kv_heads": text.num_key_value_heads,
        "vocab": text.vocab_size,
        "rope_theta": float(text.rope_theta),
        "rope_scaling_factor": float(rotary.attention_scaling),
        "mel": {
            "n_mels": fe.feature_size,
            "n_fft": fe.n_fft,
            "hop_length": fe.hop_length,
            "sampling_rate": SAMPLE_RATE,
            "chunk_frames": encoder.CHUNK_FRAMES,
            "chunk_tokens": encoder.CHUNK_TOKENS,
            "window_chunks": audio.window_chunks,
        },
        "prefill_buckets": list(ctx.prefill_buckets),
        "kv_buckets": list(ctx.kv_buckets),
        "tokens": prompt.token_ids(ctx.asr.processor, ctx.src.config),
        "prompt": prompt.render_prompt(ctx.asr),
        "languages": prompt.languages(),
        "max_new_tokens": upstream_max_new_tokens(),
        "mask_value": MASK_VALUE,
    }
    return layout.AsrParams.from_mapping(raw, where="params: ").to_dict()
