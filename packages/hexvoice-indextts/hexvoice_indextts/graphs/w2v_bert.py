"""w2v-BERT 2.0 up to the hidden layer IndexTTS-2 reads, normalised, as a
static graph: feature rows padded to a bucket, and the 0/1 row mask that makes
the real rows (and an odd clip's masked last row, which upstream keeps) what
transformers' ``Wav2Vec2BertModel`` computes for the clip alone.

``infer_v2.get_emb``: ``hidden_states[17]`` of the model run with the
extractor's attention mask, less ``wav2vec2bert_stats.pt``'s mean, divided by
the square root of its variance.  What the port does as transformers does,
with the weights of the loaded model's own modules:

- the input projection's output is zeroed on masked rows; each conformer
  layer's convolution module zeroes masked rows before its pointwise
  convolution, and its depthwise convolution is causal (left padding only), so
  rows after the clip never reach it;
- attention is over real keys only: an additive KEY_MASK on masked ones;
- the ``relative_key`` position bias, ``q . E[clamp(r - l, -left, right)]``,
  is taken as ``q @ E.T`` [rows, left + right + 1] and one Gather of a
  constant index per bucket: transformers' einsum over a [rows, rows,
  head_size] embedding would fold into a constant of 4 bytes x rows^2 x
  head_size per layer (144 MB per layer at 15 s).

Layers past the one read are not exported (the real model has 24).
"""

from __future__ import annotations

from typing import Any, Final

import torch
import torch.nn.functional as F
from torch import nn

#: additive bias on masked keys: fp16-representable (the HTP runs fp16), and
#: exp(score + KEY_MASK) is 0 in float32 for any score a layer reaches;
#: transformers adds float32's minimum, which fp16 cannot hold
KEY_MASK: Final = -1e4
#: transformers' FFN residual weight (Wav2Vec2BertEncoderLayer: "* 0.5")
FFN_HALF: Final = 0.5


def relative_index(rows: int, left: int, right: int) -> torch.Tensor:
    """[rows, rows] flat index into ``q @ E.T`` viewed as [rows * (left +
    right + 1)]: row l, key r reads distance clamp(r - l, -left, right)."""
    width = left + right + 1
    pos = torch.arange(rows)
    distance = (pos[None, :] - pos[:, None]).clamp(-left, right) + left
    return pos[:, None] * width + distance


class StaticW2vBert(nn.Module):
    """``forward(features [1, R, 160], mask [1, R]) -> hidden [1, R, width]``."""

    def __init__(
        self, model: Any, layer: int, mean: torch.Tensor, std: torch.Tensor
    ) -> None:
        super().__init__()
        cfg = model.config
        if cfg.position_embeddings_type != "relative_key":
            raise ValueError(
                f"w2v-BERT: position_embeddings_type {cfg.position_embeddings_type!r}, "
                "the port takes 'relative_key' (w2v-bert-2.0's)"
            )
        if not 1 <= layer <= cfg.num_hidden_layers:
            raise ValueError(
                f"w2v-BERT: hidden layer {layer} of a "
                f"{cfg.num_hidden_layers}-layer model"
            )
        self.projection = model.feature_projection
        self.layers = nn.ModuleList(model.encoder.layers[:layer])
        self.left = cfg.left_max_position_embeddings
        self.right = cfg.right_max_position_embeddings
        self.heads = cfg.num_attention_heads
        self.register_buffer("mean", mean.reshape(-1).float())
        self.register_buffer("std", std.reshape(-1).float())

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h, _ = self.projection(features)
        m = mask[..., None]
        h = h * m
        key_bias = ((1.0 - mask) * KEY_MASK)[:, None, None, :]
        index = relative_index(h.shape[1], self.left, self.right)
        for layer in self.layers:
            h = self._layer(layer, h, m, key_bias, index)
        return (h - self.mean) / self.std

    def _layer(
        self,
        layer: Any,
        h: torch.Tensor,
        m: torch.Tensor,
        key_bias: torch.Tensor,
        index: torch.Tensor,
    ) -> torch.Tensor:
        h = layer.ffn1(layer.ffn1_layer_norm(h)) * FFN_HALF + h
        h = (
            self._attention(
                layer.self_attn, layer.self_attn_layer_norm(h), key_bias, index
            )
            + h
        )
        h = self._convolution(layer.conv_module, h, m) + h
        h = layer.ffn2(layer.ffn2_layer_norm(h)) * FFN_HALF + h
        return layer.final_layer_norm(h)

    def _attention(
        self, attn: Any, x: torch.Tensor, key_bias: torch.Tensor, index: torch.Tensor
    ) -> torch.Tensor:
        b, rows, width = x.shape
        d = width // self.heads

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.reshape(b, rows, self.heads, d).transpose(1, 2)

        q, k, v = (
            heads(attn.linear_q(x)),
            heads(attn.linear_k(x)),
            heads(attn.linear_v(x)),
        )
        scores = q @ k.transpose(2, 3)
        by_distance = q @ attn.distance_embedding.weight.T  # [b, H, rows, distances]
        scores = scores + by_distance.reshape(b, self.heads, -1)[:, :, index]
        weights = F.softmax(scores * attn.scaling + key_bias, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, rows, width)
        return attn.linear_out(out)

    @staticmethod
    def _convolution(conv: Any, h: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        x = (conv.layer_norm(h) * m).transpose(1, 2)
        x = F.glu(conv.pointwise_conv1(x), dim=1)
        x = conv.depthwise_conv(F.pad(x, (conv.depthwise_conv.kernel_size[0] - 1, 0)))
        x = conv.depthwise_layer_norm(x.transpose(1, 2)).transpose(1, 2)
        x = conv.pointwise_conv2(conv.activation(x))
        return x.transpose(1, 2)
