"""The 12 Hz codec decoder as one static graph per window, codec_<T>
(upstream `Qwen3TTSTokenizerV2Decoder.forward`, docs/qwen3.md, codec decoder).

codes int32 [1,16,T] → wav f32 [1,1,1920·T], written for the HTP:

- The RVQ dequantisation is one in-graph Gather: the 16 codebooks' tables
  (upstream `EuclideanCodebook.decode`: embedding_sum / clamp(cluster_usage,
  1e-5), precomputed here) are stacked, each group's codes offset into its own
  rows; the first group and the 15 others then take their own `output_proj`
  (k1 convs, as MatMuls), as `SplitResidualVectorQuantizer.decode`. A table
  and its projection are scaled by a power of two s (table / s, W · s: exact,
  the product unchanged) that puts both near the geometric mean of their
  largest magnitudes: a codebook row whose usage is near zero is huge
  (embedding_sum / 1e-5) while its projection is tiny, and unscaled the fp16
  table held inf (max 65504) and the projection fp16 subnormals, which took
  such a codec to -5.7 dB on the HTP simulator from the lookup on.
- SnakeBeta is x + c·(s·s), s = sin(x·a), with a = exp(α) and
  c = 1/(exp(β) + 1e-9) folded to constants: `Pow(sin(x), 2)` returned −4.0
  for small negative sines on the HTP fp16 simulator and took the codec to 4 dB
  (docs/qwen3.md, export findings); s·s gave 50 dB.
- The pre-transformer is re-written (upstream's goes through transformers'
  mask and attention dispatch): RMSNorm squaring as x·x, RoPE cos/sin and the
  causal sliding-window mask (keys q−W+1..q, transformers'
  `sliding_window_overlay`) are constants for positions 0..T−1, since upstream
  restarts positions at 0 in every call (its `chunked_decode` too).
- Convolutions, ConvNeXt blocks and upsamplers are upstream's own modules.

Everything is causal, so right-padding a window leaves its valid prefix's
samples unchanged: a partial window runs in the same graph.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from scripts.common.build.onnx_export import export_static
from scripts.qwen3.common.decoder import RmsNorm, _rope

INPUTS = ("codes",)
OUTPUTS = ("wav",)
#: additive mask outside the sliding window: exp underflows to exactly 0 in
#: fp32 and fp16 alike (upstream masks with the dtype's minimum); finite, so an
#: fp16 graph never adds infinities
MASKED = -1.0e4


def decoder_of(codec: Any) -> nn.Module:
    """The decoder of `Qwen3TTSTokenizerV2Model` (or the decoder itself, which
    has a `.decoder` too: its conv stack)."""
    return codec if hasattr(codec, "quantizer") else codec.decoder


def samples_per_frame(codec: Any) -> int:
    return int(decoder_of(codec).total_upsample)


class FoldedSnake(nn.Module):
    """Upstream SnakeBeta with exp(α) and 1/(exp(β) + 1e-9) as constants."""

    def __init__(self, snake: nn.Module) -> None:
        super().__init__()
        alpha = torch.exp(snake.alpha.detach()).reshape(1, -1, 1)
        inv_beta = 1.0 / (torch.exp(snake.beta.detach()) + snake.no_div_by_zero)
        self.register_buffer("alpha", alpha, persistent=False)
        self.register_buffer("inv_beta", inv_beta.reshape(1, -1, 1), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        s = torch.sin(x * self.alpha)
        return x + self.inv_beta * (s * s)


def _fold_snakes(module: nn.Module) -> nn.Module:
    """A copy of `module` with every SnakeBeta replaced by FoldedSnake."""
    module = copy.deepcopy(module)
    for _, parent in list(module.named_modules()):
        for name, child in list(parent.named_children()):
            if type(child).__name__ == "SnakeBeta":
                setattr(parent, name, FoldedSnake(child))
    return module


class Dequantize(nn.Module):
    """codes [16,T] → hidden [codebook_dim, T] as SplitResidualVectorQuantizer."""

    def __init__(self, quantizer: nn.Module) -> None:
        super().__init__()
        first, rest = quantizer.rvq_first, quantizer.rvq_rest
        tables = [_table(vq) for vq in (*first.vq.layers, *rest.vq.layers)]
        bins = tables[0].shape[0]
        self.first = int(quantizer.n_q_semantic)
        # Conv1d k1 without bias: [out, in, 1] → x @ W.T
        w_first, w_rest = _k1(first.output_proj), _k1(rest.output_proj)
        s_first = fp16_balance(tables[: self.first], w_first)
        s_rest = fp16_balance(tables[self.first :], w_rest)
        tables = [t / s_first for t in tables[: self.first]] + [
            t / s_rest for t in tables[self.first :]
        ]
        self.register_buffer("table", torch.cat(tables), persistent=False)
        offsets = torch.arange(len(tables), dtype=torch.int32) * bins
        self.register_buffer("offsets", offsets.reshape(-1, 1), persistent=False)
        self.register_buffer("w_first", w_first * s_first, persistent=False)
        self.register_buffer("w_rest", w_rest * s_rest, persistent=False)

    def forward(self, codes: Tensor) -> Tensor:
        rows = torch.index_select(self.table, 0, (codes + self.offsets).reshape(-1))
        rows = rows.reshape(codes.shape[0], codes.shape[1], -1)  # [16, T, d]
        first = rows[: self.first].sum(0) @ self.w_first
        rest = rows[self.first :].sum(0) @ self.w_rest
        return (first + rest).transpose(0, 1)


def _table(vq: nn.Module) -> Tensor:
    book = vq._codebook
    if not isinstance(vq.project_out, nn.Identity):
        raise ValueError("codebook with a project_out: not the 12 Hz codec's layout")
    usage = book.cluster_usage.detach().clamp(min=book.epsilon)[:, None]
    return book.embedding_sum.detach() / usage


def fp16_balance(tables: list[Tensor], weight: Tensor) -> float:
    """The power of two s for table / s and weight · s (module docstring): the
    geometric mean of their largest magnitudes, so both sit near it (exact in
    float32, so the CPU graph's samples do not move)."""
    big_t = max(float(t.abs().max()) for t in tables)
    big_w = float(weight.abs().max())
    if big_t == 0.0 or big_w == 0.0:
        return 1.0
    return float(2.0 ** round(0.5 * math.log2(big_t / big_w)))


def _k1(conv: nn.Module) -> Tensor:
    if conv.bias is not None or conv.kernel_size != (1,):
        raise ValueError("output_proj is not a bias-free k1 conv")
    return conv.weight.detach()[:, :, 0].t().contiguous()


class SlidingTransformer(nn.Module):
    """Upstream's pre_transformer over T rows from position 0 (module docstring)."""

    def __init__(self, model: nn.Module, frames: int) -> None:
        super().__init__()
        config = model.config
        self.input_proj, self.output_proj = model.input_proj, model.output_proj
        self.layers = model.layers
        self.norms = nn.ModuleList(
            RmsNorm(n)
            for layer in model.layers
            for n in (layer.input_layernorm, layer.post_attention_layernorm)
        )
        self.norm = RmsNorm(model.norm)
        attn = model.layers[0].self_attn
        self.head_dim, self.scale = int(attn.head_dim), float(attn.scaling)
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(config.num_key_value_heads)
        pos = torch.arange(frames)
        with torch.no_grad():
            cos, sin = model.rotary_emb(torch.zeros(1), pos[None])
        self.register_buffer("cos", cos[0], persistent=False)
        self.register_buffer("sin", sin[0], persistent=False)
        q, k = pos[:, None], pos[None, :]
        window = int(config.sliding_window)
        allowed = (k <= q) & (k > q - window)
        mask = torch.zeros(frames, frames).masked_fill(~allowed, MASKED)
        self.register_buffer("mask", mask, persistent=False)

    def _attend(self, attn: nn.Module, h: Tensor) -> Tensor:
        t, hd, kh = h.shape[0], self.head_dim, self.kv_heads
        g = self.heads // kh
        q = attn.q_proj(h).reshape(t, self.heads, hd).transpose(0, 1)
        k = attn.k_proj(h).reshape(t, kh, hd).transpose(0, 1)
        v = attn.v_proj(h).reshape(t, kh, hd).transpose(0, 1)
        q = _rope(q, self.cos, self.sin).reshape(kh, g, t, hd)
        k = _rope(k, self.cos, self.sin).unsqueeze(1)
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale + self.mask
        out = torch.matmul(torch.softmax(scores, dim=-1), v.unsqueeze(1))
        out = out.reshape(self.heads, t, hd).transpose(0, 1).reshape(t, -1)
        return attn.o_proj(out)

    def forward(self, x: Tensor) -> Tensor:
        """x [T, latent] → [T, latent] (input_proj … output_proj)."""
        h = self.input_proj(x)
        for i, layer in enumerate(self.layers):
            a = self._attend(layer.self_attn, self.norms[2 * i](h))
            h = h + layer.self_attn_layer_scale(a)
            m = layer.mlp(self.norms[2 * i + 1](h))
            h = h + layer.mlp_layer_scale(m)
        return self.output_proj(self.norm(h))


class CodecWindow(nn.Module):
    """codec_<T>: codes int32 [1,16,T] → wav [1,1,1920·T] (module docstring)."""

    def __init__(self, codec: Any, frames: int) -> None:
        super().__init__()
        dec = decoder_of(codec)
        self.dequantize = Dequantize(dec.quantizer)
        self.pre_conv = dec.pre_conv
        self.transformer = SlidingTransformer(dec.pre_transformer, frames)
        self.upsample = _fold_snakes(dec.upsample)
        self.decoder = _fold_snakes(dec.decoder)

    def forward(self, codes: Tensor) -> Tensor:
        hidden = self.pre_conv(self.dequantize(codes[0]).unsqueeze(0))  # [1,L,T]
        hidden = self.transformer(hidden[0].transpose(0, 1))  # [T, L]
        hidden = hidden.transpose(0, 1).unsqueeze(0)
        for blocks in self.upsample:
            for block in blocks:
                hidden = block(hidden)
        for block in self.decoder:
            hidden = block(hidden)
        return hidden.clamp(min=-1.0, max=1.0)


def window_args(codec: Any, frames: int) -> tuple[Tensor]:
    groups = int(decoder_of(codec).config.num_quantizers)
    return (torch.zeros(1, groups, frames, dtype=torch.int32),)


def export_codec(codec: Any, frames: int, path: str | Path) -> Path:
    """codec_<frames> at `path` (I/O: module docstring)."""
    export_static(
        CodecWindow(codec, frames), window_args(codec, frames), INPUTS, OUTPUTS, path
    )
    return Path(path)
