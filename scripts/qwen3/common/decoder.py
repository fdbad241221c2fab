"""Static Qwen3 decoder graphs: a prompt prefill and one KV-cached decode step.

Built from upstream decoder layers (Qwen3-ASR's thinker text model now, Qwen3-TTS's
talker and code predictor later: docs/qwen3.md, graph set), reusing their Linear
modules and norm weights. The math is upstream's (`Qwen3ASRThinkerTextDecoderLayer`,
docs/qwen3.md, text decoder): RMSNorm → q/k/v → per-head q/k RMSNorm → RoPE → GQA
attention → o_proj, RMSNorm → SwiGLU; a final RMSNorm, then the head. Written for the
HTP:

- RMSNorm squares as x·x: upstream's `pow(2)` is the op that broke on HTP fp16
  (docs/qwen3.md, export findings, `Pow(Sin(x),2)`), so none of these
  graphs holds a Pow (scripts/common/build/onnx_export.py `no_pow2` checks every
  export).
- RoPE cos/sin are inputs (the CPU computes them, attention scaling included), so
  no position arithmetic is in a graph.
- GQA groups the query heads of each KV head ([Kh, g, ...]) instead of repeating
  the keys: a decode step reads each cache row once.
- The decode step attends to [cache + mask, own token] with one softmax, as
  GPT-SoVITS's T2S step (scripts/gptsovits/models/t2s.py); the CPU writes k_new/v_new
  back (daemon/sdk/ar/kv.py). Caches are [layers, kv_heads, L, head_dim].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class DecoderDims:
    """Widths of a Qwen3 decoder stack, read off its modules."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int | None  # None: no head (the stack's output is the normed hidden)


class RmsNorm(nn.Module):
    """Upstream `*RMSNorm` (weight, variance_epsilon), squaring as x·x."""

    def __init__(self, norm: nn.Module) -> None:
        super().__init__()
        self.weight = norm.weight
        self.eps = float(norm.variance_epsilon)

    def forward(self, x: Tensor) -> Tensor:
        variance = (x * x).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def _rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Upstream `apply_rotary_pos_emb` on [heads, S, hd] with cos/sin [S, hd]."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Qwen3Layer(nn.Module):
    """One upstream decoder layer (batch 1, rows = positions) for static graphs."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        attn, mlp = layer.self_attn, layer.mlp
        self.head_dim = int(attn.head_dim)
        self.heads = attn.q_proj.out_features // self.head_dim
        self.kv_heads = attn.k_proj.out_features // self.head_dim
        self.groups = self.heads // self.kv_heads
        self.scale = float(attn.scaling)
        self.q_proj, self.k_proj = attn.q_proj, attn.k_proj
        self.v_proj, self.o_proj = attn.v_proj, attn.o_proj
        self.q_norm, self.k_norm = RmsNorm(attn.q_norm), RmsNorm(attn.k_norm)
        self.input_norm = RmsNorm(layer.input_layernorm)
        self.post_norm = RmsNorm(layer.post_attention_layernorm)
        self.gate_proj, self.up_proj = mlp.gate_proj, mlp.up_proj
        self.down_proj, self.act = mlp.down_proj, mlp.act_fn

    def _qkv(self, x: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, ...]:
        """x [S,H] → q [Kh,g,S,hd], k/v [Kh,S,hd] (k after norm and RoPE)."""
        s, hd = x.shape[0], self.head_dim
        h = self.input_norm(x)
        q = self.q_norm(self.q_proj(h).reshape(s, self.heads, hd)).transpose(0, 1)
        k = self.k_norm(self.k_proj(h).reshape(s, self.kv_heads, hd)).transpose(0, 1)
        v = self.v_proj(h).reshape(s, self.kv_heads, hd).transpose(0, 1)
        # Query head i uses KV head i // groups (upstream repeat_kv).
        q = _rope(q, cos, sin).reshape(self.kv_heads, self.groups, s, hd)
        return q, _rope(k, cos, sin), v

    def _finish(self, x: Tensor, attn: Tensor) -> Tensor:
        """attn [Kh,g,S,hd] → o_proj, residual, SwiGLU MLP, residual."""
        s = x.shape[0]
        attn = attn.reshape(self.heads, s, self.head_dim).transpose(0, 1)
        x = x + self.o_proj(attn.reshape(s, self.heads * self.head_dim))
        h = self.post_norm(x)
        return x + self.down_proj(self.act(self.gate_proj(h)) * self.up_proj(h))

    def prefill(
        self, x: Tensor, mask: Tensor, cos: Tensor, sin: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        """x [P,H], additive mask [P,P], cos/sin [P,hd] → x, k, v [Kh,P,hd]."""
        q, k, v = self._qkv(x, cos, sin)
        scores = torch.matmul(q, k.unsqueeze(1).transpose(-1, -2)) * self.scale
        probs = torch.softmax(scores + mask, dim=-1)
        return self._finish(x, torch.matmul(probs, v.unsqueeze(1))), k, v

    def decode(
        self,
        x: Tensor,
        k_cache: Tensor,
        v_cache: Tensor,
        mask: Tensor,
        cos: Tensor,
        sin: Tensor,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """x [1,H], caches [Kh,L,hd], mask [1,L] → x, k_new, v_new [Kh,1,hd]."""
        q, k, v = self._qkv(x, cos, sin)
        q = q.reshape(self.kv_heads, self.groups, self.head_dim)
        length = k_cache.shape[1]
        # K·q ([Kh,L,hd] @ [Kh,hd,g]) as T2S: only the small [Kh,L,g] result is
        # transposed, never the cache (a decode step streams it once).
        cached = torch.matmul(k_cache, q.transpose(-1, -2)).transpose(-1, -2)
        cached = cached * self.scale + mask
        own = (q * k).sum(dim=-1, keepdim=True) * self.scale
        probs = torch.softmax(torch.cat([cached, own], dim=-1), dim=-1)
        p_cache, p_own = probs.split([length, 1], dim=-1)
        attn = torch.matmul(p_cache, v_cache) + p_own * v
        return self._finish(x, attn.unsqueeze(2)), k, v


class Qwen3Stack(nn.Module):
    """Decoder layers, the final norm and an optional head (tied or not: the
    module given), wrapped for the static graphs."""

    def __init__(
        self, layers: Sequence[nn.Module], norm: nn.Module, head: nn.Module | None
    ) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Qwen3Layer(layer) for layer in layers)
        self.norm = RmsNorm(norm)
        self.head = head
        first = self.layers[0]
        self.dims = DecoderDims(
            hidden=first.q_proj.in_features,
            layers=len(self.layers),
            heads=first.heads,
            kv_heads=first.kv_heads,
            head_dim=first.head_dim,
            vocab=None if head is None else head.out_features,
        )

    def out(self, h: Tensor) -> Tensor:
        """Last hidden rows [n,H] → logits [n,V] (or the normed hidden)."""
        h = self.norm(h)
        return h if self.head is None else self.head(h)

    def out_with_hidden(self, h: Tensor) -> tuple[Tensor, Tensor]:
        """Last hidden rows [n,H] → (logits [n,V], the final-normed rows [n,H]):
        Qwen3-TTS's talker feeds the normed hidden to its code predictor
        (upstream `past_hidden`, docs/qwen3.md, TTS generation loop)."""
        h = self.norm(h)
        return self.head(h), h


def _cast(x: Tensor, dtype: torch.dtype) -> Tensor:
    return x if x.dtype == dtype else x.to(dtype)


class _StackGraph(nn.Module):
    """A graph over the stack: `kv_dtype` is its K/V tensors' dtype (float16
    for the NPU binaries, T2S-style; compute stays float32); with `hidden` it
    also gives the final-normed hidden after the logits."""

    def __init__(
        self,
        stack: Qwen3Stack,
        kv_dtype: torch.dtype = torch.float32,
        hidden: bool = False,
    ):
        super().__init__()
        self.stack, self.kv_dtype, self.hidden = stack, kv_dtype, hidden

    def _outputs(self, h: Tensor, ks: list[Tensor], vs: list[Tensor]) -> tuple:
        """logits[, h], k, v of row(s) `h` and the layers' K/V."""
        kv = self.kv_dtype
        k, v = _cast(torch.stack(ks), kv), _cast(torch.stack(vs), kv)
        if self.hidden:
            logits, normed = self.stack.out_with_hidden(h)
            return logits, normed, k, v
        return self.stack.out(h), k, v


class Prefill(_StackGraph):
    """Graph prefill_P: x [1,P,H], mask [1,1,P,P], cos/sin [1,P,hd], last [1,P]
    (one-hot: the row whose logits are wanted) → logits [1,V], k, v [Ly,Kh,P,hd].
    `kv_dtype` is the k/v outputs' dtype. With `hidden`, the outputs are
    logits, h [1,H] (the final-normed hidden of the `last` row), k, v
    (PREFILL_OUTPUTS_H)."""

    def forward(
        self, x: Tensor, mask: Tensor, cos: Tensor, sin: Tensor, last: Tensor
    ) -> tuple[Tensor, ...]:
        h, ks, vs = x[0], [], []
        for layer in self.stack.layers:
            h, k, v = layer.prefill(h, mask[0, 0], cos[0], sin[0])
            ks.append(k)
            vs.append(v)
        # The norm is per row, so selecting before it is exact.
        return self._outputs(torch.matmul(last, h), ks, vs)


class Decode(_StackGraph):
    """Graph decode_L: x [1,1,H], k_cache/v_cache [Ly,Kh,L,hd], mask [1,1,1,L],
    cos/sin [1,1,hd] → logits [1,V], k_new/v_new [Ly,Kh,1,hd]; `kv_dtype` is the
    dtype of the four K/V tensors. With `hidden`, the outputs are logits, h [1,H]
    (final-normed), k_new, v_new (DECODE_OUTPUTS_H)."""

    def forward(
        self,
        x: Tensor,
        k_cache: Tensor,
        v_cache: Tensor,
        mask: Tensor,
        cos: Tensor,
        sin: Tensor,
    ) -> tuple[Tensor, ...]:
        k_cache = _cast(k_cache, torch.float32)
        v_cache = _cast(v_cache, torch.float32)
        return self._outputs(
            *decode_layers(self.stack, x[0], k_cache, v_cache, mask, cos, sin)
        )


def decode_layers(
    stack: Qwen3Stack, h: Tensor, *caches_mask_rope: Tensor
) -> tuple[Tensor, list[Tensor], list[Tensor]]:
    """Row h [1,H] through every layer's decode step, given the rest of a
    decode graph's inputs (DECODE_INPUTS after x, K/V caches float32) → the last
    layer's h and each layer's k_new, v_new [Kh,1,hd]."""
    k_cache, v_cache, mask, cos, sin = caches_mask_rope
    ks, vs = [], []
    for i, layer in enumerate(stack.layers):
        h, k, v = layer.decode(h, k_cache[i], v_cache[i], mask[0, 0], cos[0], sin[0])
        ks.append(k)
        vs.append(v)
    return h, ks, vs
