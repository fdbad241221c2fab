"""Qwen3-TTS's talker and text projection as static graphs.

Facts: docs/qwen3.md, TTS components; graph set.

`model` is upstream's `Qwen3TTSForConditionalGeneration` or its `.talker`
(`Qwen3TTSTalkerForConditionalGeneration`), fp32, eval. The talker is the Qwen3
decoder family (scripts/qwen3/common/decoder.py): its `Qwen3TTSTalkerDecoderLayer`s have
the same q/k/v, QK-RMSNorm and SwiGLU modules, `codec_head` is the head.

Its RoPE is upstream's M-RoPE (`apply_multimodal_rotary_pos_emb`); a TTS prompt
has no vision rows, so the three position rows are equal and M-RoPE is plain
RoPE, whatever `mrope_section` / `interleaved` say. cos/sin are graph inputs
computed by the CPU (times the rotary embedding's `attention_scaling`, 1.0 for
the default rope type: `rope_of`); attention scales by head_dim**-0.5 (read off
the module).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from scripts.common.build.onnx_export import export_static
from scripts.qwen3.common import decoder
from scripts.qwen3.common.decoder_export import export_step

#: the only rope type whose cos/sin the runtime computes (inv_freq from theta)
DEFAULT_ROPE = "default"


@dataclass(frozen=True)
class Rope:
    """What the CPU needs for a graph's cos/sin inputs."""

    theta: float
    attention_scaling: float


def talker_of(model: Any) -> nn.Module:
    """The talker of a top model, or the talker itself."""
    return getattr(model, "talker", model)


def rope_of(rotary: nn.Module, config: Any) -> Rope:
    """An upstream rotary embedding's theta and scaling; only the default rope
    type (inv_freq = theta ** -(2i/hd)) is what the runtime's tables compute."""
    kind = getattr(rotary, "rope_type", DEFAULT_ROPE)
    if kind != DEFAULT_ROPE:
        raise ValueError(f"rope_type {kind!r}: only {DEFAULT_ROPE!r} is supported")
    return Rope(float(config.rope_theta), float(rotary.attention_scaling))


def no_sliding_window(config: Any, what: str) -> None:
    """The static graphs attend to the whole cache; upstream's talker and code
    predictor only slide with use_sliding_window (off in the checkpoints)."""
    if getattr(config, "sliding_window", None) is not None:
        raise ValueError(f"{what}: sliding_window {config.sliding_window} unsupported")


def talker_stack(model: Any) -> decoder.Qwen3Stack:
    """The talker's layers, final norm and codec_head, wrapped."""
    talker = talker_of(model)
    no_sliding_window(talker.config, "talker")
    inner = talker.model
    return decoder.Qwen3Stack(inner.layers, inner.norm, talker.codec_head)


def talker_rope(model: Any) -> Rope:
    talker = talker_of(model)
    return rope_of(talker.model.rotary_emb, talker.config)


def export_talker_prefill(
    model: Any,
    length: int,
    path: str | Path,
    kv_dtype: torch.dtype = torch.float32,
) -> Path:
    """talker_prefill_<P>: x [1,P,Ht], mask [1,1,P,P], cos/sin [1,P,hd],
    last [1,P] → logits [1,V], h [1,Ht], k/v [Ly,Kh,P,hd] (kv_dtype)."""
    stack = talker_stack(model)
    return export_step(stack, "prefill", length, path, kv_dtype, hidden=True)


def export_talker_decode(
    model: Any,
    length: int,
    path: str | Path,
    kv_dtype: torch.dtype = torch.float32,
) -> Path:
    """talker_decode_<L>: x [1,1,Ht], k_cache/v_cache [Ly,Kh,L,hd] (kv_dtype),
    mask [1,1,1,L], cos/sin [1,1,hd] → logits [1,V], h [1,Ht], k_new/v_new."""
    stack = talker_stack(model)
    return export_step(stack, "decode", length, path, kv_dtype, hidden=True)


class TextProjection(nn.Module):
    """text_proj: x [R,Dt] → y [R,Ht], upstream's `text_projection`
    (`Qwen3TTSTalkerResizeMLP`: Linear, act, Linear) as is."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.mlp = talker_of(model).text_projection

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(x)


def export_text_proj(model: Any, rows: int, path: str | Path) -> Path:
    """text_proj over `rows` text rows at `path`."""
    talker = talker_of(model)
    x = torch.zeros(rows, talker.config.text_hidden_size)
    export_static(TextProjection(talker), (x,), ("x",), ("y",), path)
    return Path(path)
