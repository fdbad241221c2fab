"""Qwen3-TTS's code predictor as one static step graph, cp_step.

Facts: docs/qwen3.md, TTS generation loop.

Upstream (`Qwen3TTSTalkerCodePredictorModelForConditionalGeneration`) runs per
frame a 2-row prefill [past_hidden, codec_embedding(code0)] → lm_head[0] → code1,
then 14 steps: step s = 2..15 embeds code_{s-1} with `model.codec_embedding[s-2]`
and predicts with `lm_head[s-1]`. Every input row goes through
`small_to_mtp_projection` (Identity when the hidden sizes match). Its layers are
`Qwen3TTSDecoderLayer`s with standard RoPE, positions 0..15 per frame.

cp_step is one row of that against a 16-row cache: x [1,1,Ht] (projected in the
graph), k_cache/v_cache [Lc,Khc,G,hdc], mask [1,1,1,G], cos/sin [1,1,hdc] and
head int32 [1] → logits [1,Vc], k_new/v_new [Lc,Khc,1,hdc]. The 15 heads are
stacked [15,Hc,Vc] in the graph and `head` gathers one, so a frame is 16 calls
of one graph: position 0 (past_hidden; its logits unused), 1 (head 0), s (head
s-1). Measured at full width (scripts/qwen3/tts/graphs/cp_measure.py, ORT CPU): heads on
the CPU would cost the host ~4 ms per frame (numpy fp32 h @ W, 126 MB of
arrays), 4x the whole 1 ms host budget, against nothing in the graph; a 2-row
prefill graph costs one call instead of two (weight-bound), i.e. one of 16 calls
a frame, for a second copy of the predictor's weights (+161 MB fp16), so the
prefill is two cp_step calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from scripts.common.build.onnx_export import export_static
from scripts.qwen3.common import decoder
from scripts.qwen3.tts.graphs.talker import Rope, no_sliding_window, rope_of, talker_of

INPUTS = ("x", "k_cache", "v_cache", "mask", "cos", "sin", "head")
OUTPUTS = ("logits", "k_new", "v_new")
#: without the heads (the CPU applies lm_head[k] to h): measurement only
HIDDEN_OUTPUTS = ("h", "k_new", "v_new")


def predictor_of(model: Any) -> nn.Module:
    return talker_of(model).code_predictor


def predictor_stack(model: Any) -> decoder.Qwen3Stack:
    """The predictor's layers and final norm (no head: cp_step selects one)."""
    cp = predictor_of(model)
    no_sliding_window(cp.config, "code predictor")
    return decoder.Qwen3Stack(cp.model.layers, cp.model.norm, None)


def predictor_rope(model: Any) -> Rope:
    cp = predictor_of(model)
    return rope_of(cp.model.rotary_emb, cp.config)


def groups(model: Any) -> int:
    """Rows of the predictor's cache per frame (num_code_groups, 16)."""
    return int(predictor_of(model).config.num_code_groups)


class CpStep(nn.Module):
    """The cp_step graph (module docstring); `heads=False` outputs the final-
    normed h [1,Hc] instead of logits (the heads-on-CPU variant, measured)."""

    def __init__(
        self, model: Any, kv_dtype: torch.dtype = torch.float32, heads: bool = True
    ) -> None:
        super().__init__()
        cp = predictor_of(model)
        self.proj = cp.small_to_mtp_projection
        self.stack = predictor_stack(model)
        self.kv_dtype, self.with_heads = kv_dtype, heads
        if heads:
            # [15, Hc, Vc]: x @ W.T of each nn.Linear, gathered by `head`.
            stacked = torch.stack([h.weight.detach().t() for h in cp.lm_head])
            self.register_buffer("heads", stacked.contiguous(), persistent=False)

    def forward(
        self,
        x: Tensor,
        k_cache: Tensor,
        v_cache: Tensor,
        mask: Tensor,
        cos: Tensor,
        sin: Tensor,
        head: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        h = self.proj(x[0])
        k_cache = k_cache.to(torch.float32)
        v_cache = v_cache.to(torch.float32)
        caches_mask_rope = k_cache, v_cache, mask, cos, sin
        h, ks, vs = decoder.decode_layers(self.stack, h, *caches_mask_rope)
        h = self.stack.norm(h)
        k_new = torch.stack(ks).to(self.kv_dtype)
        v_new = torch.stack(vs).to(self.kv_dtype)
        if not self.with_heads:
            return h, k_new, v_new
        weight = torch.index_select(self.heads, 0, head)[0]
        return torch.matmul(h, weight), k_new, v_new


def step_args(
    model: Any, kv_dtype: torch.dtype = torch.float32, heads: bool = True
) -> tuple[Tensor, ...]:
    """Example inputs of cp_step (names: INPUTS; without `head` if not heads)."""
    dims, g = predictor_stack(model).dims, groups(model)
    hidden = talker_of(model).config.hidden_size
    cache = torch.zeros(dims.layers, dims.kv_heads, g, dims.head_dim, dtype=kv_dtype)
    args = (
        torch.zeros(1, 1, hidden),
        cache,
        cache.clone(),
        torch.zeros(1, 1, 1, g),
        torch.ones(1, 1, dims.head_dim),
        torch.zeros(1, 1, dims.head_dim),
    )
    return (*args, torch.zeros(1, dtype=torch.int32)) if heads else args


def export_cp_step(
    model: Any, path: str | Path, kv_dtype: torch.dtype = torch.float32
) -> Path:
    """The cp_step graph at `path` (I/O: module docstring)."""
    export_static(
        CpStep(model, kv_dtype), step_args(model, kv_dtype), INPUTS, OUTPUTS, path
    )
    return Path(path)
