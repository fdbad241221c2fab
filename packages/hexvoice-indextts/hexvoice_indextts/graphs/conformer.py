"""The GPT's conformer condition encoders (upstream's wenet-style
``ConformerEncoder`` in ``gpt/conformer_encoder.py``, ``conv2d2`` input
layer, relative-position attention, convolution module, no macaron) as a
static graph: rows padded to a bucket with a 0/1 row mask.

What upstream computes, with its checkpoint's weights:

- ``Conv2dSubsampling2``: Conv2d(1, D, 3, stride 2) over (rows, 1024) and
  ReLU, a Linear of the flattened channels, times sqrt(D); its mask is
  ``mask[:, 2::2]`` ((rows - 1) // 2 outputs, each reading only real rows);
- positional embeddings ``pe[:rows']`` (a buffer of the checkpoint) through
  ``linear_pos``, and scores ``((q + u) k^T + (q + v) p^T) / sqrt(d_k)``: no
  relative shift, so a key's bias depends on its own position only;
- masked keys get -inf (KEY_MASK here: fp16), the convolution module zeroes
  masked rows before its first and after its last pointwise convolution; the
  port also zeroes them before the centred depthwise convolution, which at
  the clip's end reads upstream's zero padding.

upstream passes the feature width (1024) as the condition's length
(``torch.tensor([spk_cond_emb.shape[-1]])`` in infer_v2), so every row of a
clip under 1024 rows (20 s; clips are cut to 15 s) is real.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

import torch
import torch.nn.functional as F

from hexvoice_indextts.graphs.w2v_bert import KEY_MASK
from hexvoice_indextts.graphs.weights import Weights
from hexvoice_indextts.model_dir.config import Conformer

#: the encoder layers' LayerNorm eps (upstream's default; the convolution
#: module's kernel, 15 by default, is read from its weight)
NORM_EPS: Final = 1e-5
#: Conv2dSubsampling2: kernel 3, stride 2, no padding
SUB_KERNEL: Final = 3
SUB_STRIDE: Final = 2


def subsampled(rows: int) -> int:
    """Rows after Conv2dSubsampling2."""
    return (rows - SUB_KERNEL) // SUB_STRIDE + 1


class MaskedConformer(Weights):
    """``forward(x [1, R, input], mask [1, R]) -> (h [1, R', D], mask [1, R'])``."""

    def __init__(self, state: Mapping[str, torch.Tensor], cfg: Conformer) -> None:
        if cfg.input_layer != "conv2d2":
            raise ValueError(
                f"conformer input_layer {cfg.input_layer!r}: the port takes "
                "IndexTTS-2's 'conv2d2'"
            )
        super().__init__(state)
        self.blocks, self.heads = cfg.num_blocks, cfg.attention_heads
        self.width = cfg.output_size

    def _linear(self, x: torch.Tensor, key: str, bias: bool = True) -> torch.Tensor:
        return F.linear(
            x, self.w(key + ".weight"), self.w(key + ".bias") if bias else None
        )

    def _norm(self, x: torch.Tensor, key: str) -> torch.Tensor:
        w, b = self.w(key + ".weight"), self.w(key + ".bias")
        return F.layer_norm(x, (x.shape[-1],), w, b, NORM_EPS)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.relu(
            F.conv2d(
                x[:, None],
                self.w("embed.conv.0.weight"),
                self.w("embed.conv.0.bias"),
                stride=SUB_STRIDE,
            )
        )
        b, c, t, f = h.shape
        h = self._linear(h.transpose(1, 2).reshape(b, t, c * f), "embed.out.0")
        h = h * math.sqrt(self.width)
        pos = self.w("embed.pos_enc.pe")[:, :t]
        m = mask[:, SUB_KERNEL - 1 :: SUB_STRIDE]
        key_bias = ((1.0 - m) * KEY_MASK)[:, None, None, :]
        for i in range(self.blocks):
            h = self._block(f"encoders.{i}.", h, m[..., None], key_bias, pos)
        return self._norm(h, "after_norm"), m

    def _block(
        self,
        k: str,
        h: torch.Tensor,
        m: torch.Tensor,
        key_bias: torch.Tensor,
        pos: torch.Tensor,
    ) -> torch.Tensor:
        h = h + self._attention(
            k + "self_attn.", self._norm(h, k + "norm_mha"), key_bias, pos
        )
        h = h + self._convolution(k + "conv_module.", self._norm(h, k + "norm_conv"), m)
        x = self._norm(h, k + "norm_ff")
        h = h + self._linear(
            F.silu(self._linear(x, k + "feed_forward.w_1")), k + "feed_forward.w_2"
        )
        return self._norm(h, k + "norm_final")

    def _attention(
        self, k: str, x: torch.Tensor, key_bias: torch.Tensor, pos: torch.Tensor
    ) -> torch.Tensor:
        b, t, _ = x.shape
        d = self.width // self.heads

        def heads(y: torch.Tensor) -> torch.Tensor:
            return y.reshape(y.shape[0], -1, self.heads, d).transpose(1, 2)

        q = self._linear(x, k + "linear_q").reshape(b, t, self.heads, d)
        key, value = (
            heads(self._linear(x, k + "linear_k")),
            heads(self._linear(x, k + "linear_v")),
        )
        p = heads(self._linear(pos, k + "linear_pos", bias=False))
        with_u = (q + self.w(k + "pos_bias_u")).transpose(1, 2)
        with_v = (q + self.w(k + "pos_bias_v")).transpose(1, 2)
        scores = (
            with_u @ key.transpose(-2, -1) + with_v @ p.transpose(-2, -1)
        ) / math.sqrt(d)
        weights = F.softmax(scores + key_bias, dim=-1)
        out = (weights @ value).transpose(1, 2).reshape(b, t, self.width)
        return self._linear(out, k + "linear_out")

    def _convolution(self, k: str, x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        y = (x * m).transpose(1, 2)
        y = F.conv1d(
            y,
            self.w(k + "pointwise_conv1.weight"),
            self.w(k + "pointwise_conv1.bias"),
        )
        # upstream's one clip has zeros past its end where the depthwise conv
        # reads; padded rows hold GLU(bias) here: masked again
        y = F.glu(y, dim=1) * m.transpose(1, 2)
        w = self.w(k + "depthwise_conv.weight")
        pad = (w.shape[-1] - 1) // 2  # centred (upstream's lorder is 0)
        y = F.conv1d(
            y, w, self.w(k + "depthwise_conv.bias"), padding=pad, groups=y.shape[1]
        )
        y = F.silu(self._norm(y.transpose(1, 2), k + "norm")).transpose(1, 2)
        y = F.conv1d(
            y,
            self.w(k + "pointwise_conv2.weight"),
            self.w(k + "pointwise_conv2.bias"),
        )
        return y.transpose(1, 2) * m
