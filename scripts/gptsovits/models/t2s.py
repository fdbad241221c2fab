"""T2S (GPT) decoder of GPT-SoVITS v2Pro, arranged for two static NPU graphs
(models/t2s_graphs.py).

Parameter names equal upstream's Text2SemanticDecoder state dict (without the
Lightning "model." prefix), so checkpoints load strictly by name. Architecture per
docs/gpt-sovits.md, T2S: post-norm transformer, fused in_proj
(q, k, v order), FFN 4 x width with ReLU, LayerNorm eps 1e-5.

Static split (embeddings, positions, sampling and KV bookkeeping on the CPU):
- prefill: xy [1,P,D] + additive mask [1,1,P,P] -> h [1,P,D], k, v [layers,H,P,dh]
- decode:  x [1,1,D], k_cache, v_cache [layers,H,L,dh], mask [1,1,1,L]
           -> logits [1,V], k_new, v_new [layers,H,1,dh]
K and V share the layout [layers, heads, positions, head_dim]: the decode scores
are computed as K @ q (a matrix-vector product per head) instead of q @ K^T, so no
transpose of the cache is needed and the runtime can bind both fp16 caches as-is
and write a new token with one contiguous row copy per (layer, head).
The decode attention is softmax over [cache scores + mask, own-token score]: the
new token's k/v are used in-graph and written to the cache by the CPU afterwards.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from scripts.gptsovits.models.checkpoints import (
    GPT_PREFIX,
    GptCheckpoint,
    load_gpt_checkpoint,
    load_state_strict,
)

# Upstream SinePositionalEmbedding prebuilds 4000 positions.
PE_POSITIONS = 4000
# Upstream TransformerEncoderLayer(layer_norm_eps=1e-5); FFN width 4 x d_model.
LN_EPS = 1e-5
FFN_MULT = 4


@dataclass(frozen=True)
class T2SDims:
    vocab: int  # semantic tokens incl. EOS
    phone_vocab: int
    dim: int
    heads: int
    layers: int
    eos: int
    bert_dim: int  # upstream hard-codes 1024 (RoBERTa-large); read from weights

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    @classmethod
    def from_checkpoint(cls, ckpt: GptCheckpoint) -> T2SDims:
        model = ckpt.config.get("model")
        if not isinstance(model, Mapping):
            raise ValueError("GPT config has no 'model' section")
        try:
            dims = cls(
                vocab=int(model["vocab_size"]),
                phone_vocab=int(model["phoneme_vocab_size"]),
                dim=int(model["hidden_dim"]),
                heads=int(model["head"]),
                layers=int(model["n_layer"]),
                eos=int(model["EOS"]),
                bert_dim=int(ckpt.weights["bert_proj.weight"].shape[1]),
            )
        except KeyError as exc:
            raise ValueError(f"GPT config/weights lack {exc}") from exc
        if int(model["embedding_dim"]) != dims.dim:
            raise ValueError("embedding_dim != hidden_dim is not a valid T2S model")
        if dims.eos != dims.vocab - 1 or dims.dim % dims.heads:
            raise ValueError(f"inconsistent T2S config: {dict(model)}")
        return dims


def sine_table(positions: int, dim: int) -> Tensor:
    """Upstream SinePositionalEmbedding table: interleaved sin (even) / cos (odd)."""
    pos = torch.arange(positions, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(
        torch.arange(0, dim, 2, dtype=torch.float32) * -(math.log(10000.0) / dim)
    )
    table = torch.zeros(positions, dim)
    table[:, 0::2] = torch.sin(pos * div)
    table[:, 1::2] = torch.cos(pos * div)
    return table


class _TokenEmbedding(nn.Module):
    def __init__(self, rows: int, dim: int) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(rows, dim)


class _Position(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1))


class _SelfAttention(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.in_proj_weight = nn.Parameter(torch.empty(3 * dim, dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * dim))
        self.out_proj = nn.Linear(dim, dim)
        nn.init.xavier_uniform_(self.in_proj_weight)


class _Block(nn.Module):
    def __init__(self, dims: T2SDims) -> None:
        super().__init__()
        self.heads, self.head_dim = dims.heads, dims.head_dim
        self.self_attn = _SelfAttention(dims.dim)
        self.linear1 = nn.Linear(dims.dim, FFN_MULT * dims.dim)
        self.linear2 = nn.Linear(FFN_MULT * dims.dim, dims.dim)
        self.norm1 = nn.LayerNorm(dims.dim, eps=LN_EPS)
        self.norm2 = nn.LayerNorm(dims.dim, eps=LN_EPS)

    def _qkv_heads(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """[1,T,D] -> three [H,T,dh] tensors."""
        qkv = F.linear(x, self.self_attn.in_proj_weight, self.self_attn.in_proj_bias)
        t = x.shape[1]
        q, k, v = (
            qkv.reshape(t, 3, self.heads, self.head_dim).permute(1, 2, 0, 3).unbind(0)
        )
        return q, k, v

    def _finish(self, x: Tensor, attn: Tensor) -> Tensor:
        """attn [H,T,dh] -> out_proj, residual + norm1, FFN, residual + norm2."""
        t = x.shape[1]
        attn = attn.permute(1, 0, 2).reshape(1, t, self.heads * self.head_dim)
        x = self.norm1(x + self.self_attn.out_proj(attn))
        return self.norm2(x + self.linear2(F.relu(self.linear1(x))))

    def prefill(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """x [1,P,D], mask [P,P] additive -> x, k, v [H,P,dh]."""
        q, k, v = self._qkv_heads(x)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.head_dim**-0.5 + mask
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self._finish(x, attn), k, v

    def decode(
        self, x: Tensor, k_cache: Tensor, v_cache: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        """x [1,1,D], caches [H,L,dh], mask [1,1,L] -> x, k_new, v_new [H,1,dh]."""
        q, k, v = self._qkv_heads(x)
        scale = self.head_dim**-0.5
        length = k_cache.shape[1]
        # [H,L,dh] @ [H,dh,1]; reshaping [H,L,1] -> [H,1,L] moves no data.
        cached = torch.matmul(k_cache, q.reshape(self.heads, self.head_dim, 1))
        cached = cached.reshape(self.heads, 1, length) * scale + mask
        own = (q * k).sum(dim=-1, keepdim=True) * scale
        probs = torch.softmax(torch.cat([cached, own], dim=-1), dim=-1)
        p_cache, p_own = probs.split([length, 1], dim=-1)
        attn = torch.matmul(p_cache, v_cache) + p_own * v
        return self._finish(x, attn), k, v

    def reference(
        self, x: Tensor, past: tuple[Tensor, Tensor] | None, blocked: Tensor | None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Upstream semantics (T2SBlock.process_prompt / decode_next_token): exact
        lengths, growing cache, boolean mask (True = blocked), torch SDPA."""
        q, k, v = self._qkv_heads(x)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=1), torch.cat([past[1], v], dim=1)
        allowed = None if blocked is None else ~blocked
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        return self._finish(x, attn), (k, v)


class _Layers(nn.Module):
    def __init__(self, dims: T2SDims) -> None:
        super().__init__()
        self.layers = nn.ModuleList(_Block(dims) for _ in range(dims.layers))


class T2SModel(nn.Module):
    """Weights and math of Text2SemanticDecoder (inference only)."""

    def __init__(self, dims: T2SDims) -> None:
        super().__init__()
        self.dims = dims
        self.bert_proj = nn.Linear(dims.bert_dim, dims.dim)
        self.ar_text_embedding = _TokenEmbedding(dims.phone_vocab, dims.dim)
        self.ar_text_position = _Position()
        self.ar_audio_embedding = _TokenEmbedding(dims.vocab, dims.dim)
        self.ar_audio_position = _Position()
        self.h = _Layers(dims)
        self.ar_predict_layer = nn.Linear(dims.dim, dims.vocab, bias=False)
        self.register_buffer("pe", sine_table(PE_POSITIONS, dims.dim), persistent=False)

    @classmethod
    def from_checkpoint(
        cls, ckpt: GptCheckpoint, source: str = "GPT checkpoint"
    ) -> T2SModel:
        model = cls(T2SDims.from_checkpoint(ckpt))
        load_state_strict(model, ckpt.weights, source, key_prefix=GPT_PREFIX)
        return model.eval()

    @classmethod
    def load(cls, path: Path) -> T2SModel:
        """The model of the GPT checkpoint at ``path``."""
        return cls.from_checkpoint(load_gpt_checkpoint(path), str(path))

    # CPU-side pieces (the runtime mirrors these in numpy) ---------------------
    def embed_text(self, phones: Tensor, bert: Tensor) -> Tensor:
        """phones [n] int, bert [bert_dim, n] -> [1,n,D] (TTS make_input_data)."""
        x = self.ar_text_embedding.word_embeddings(phones) + self.bert_proj(bert.T)
        return (x + self.ar_text_position.alpha * self.pe[: len(phones)]).unsqueeze(0)

    def embed_audio(self, tokens: Tensor, start: int) -> Tensor:
        """tokens [n] at audio positions start.. -> [1,n,D]."""
        pe = self.pe[start : start + len(tokens)]
        x = self.ar_audio_embedding.word_embeddings(tokens)
        return (x + self.ar_audio_position.alpha * pe).unsqueeze(0)

    # Reference: upstream's dynamic algorithm ---------------------------------
    @torch.no_grad()
    def reference_logits(
        self, phones: Tensor, bert: Tensor, prompt: Tensor, tokens: Tensor
    ) -> Tensor:
        """Logits of the prefill step and of one teacher-forced step per token in
        `tokens` ([1 + len(tokens), V]), computed like infer_panel_naive."""
        n_x, n_y = len(phones), len(prompt)
        xy = torch.cat([self.embed_text(phones, bert), self.embed_audio(prompt, 0)], 1)
        blocked = torch.zeros(n_x + n_y, n_x + n_y, dtype=torch.bool)
        blocked[:n_x, n_x:] = True  # text never sees audio
        blocked[n_x:, n_x:] = torch.ones(n_y, n_y, dtype=torch.bool).triu(1)
        past: list = [None] * self.dims.layers
        x, mask = xy, blocked
        out = []
        for step in range(len(tokens) + 1):
            for i, block in enumerate(self.h.layers):
                x, past[i] = block.reference(x, past[i], mask)
            out.append(self.ar_predict_layer(x[0, -1]))
            if step < len(tokens):
                x, mask = self.embed_audio(tokens[step : step + 1], n_y + step), None
        return torch.stack(out)
