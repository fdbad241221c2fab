"""Building blocks of the SoVITS v2Pro synthesizer (upstream module/attentions.py,
modules.py, mrte_model.py, models.py Generator), written for static shapes.

Attribute names match upstream so state-dict keys match. Padding is handled with
explicit 0/1 masks: every conv input is masked, attention adds MASK_VALUE for
blocked pairs, so a padded static graph computes exactly what upstream computes
on the unpadded sequence (upstream itself runs with all-ones masks at B=1).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from scripts.gptsovits.shapes import MASK_VALUE

# modules.LRELU_SLOPE; the generator's last activation uses torch's default.
LRELU_SLOPE = 0.1
FINAL_LRELU_SLOPE = 0.01
# attentions.Encoder(window_size=4): relative positions -4..4, shared by heads.
REL_WINDOW = 4


class WNConv1d(nn.Module):
    """Conv1d / ConvTranspose1d under old-style weight norm (dim 0), stored as
    weight_g / weight_v like torch.nn.utils.weight_norm. The effective weight
    depends on parameters only, so ONNX export constant-folds it."""

    def __init__(
        self,
        cin: int,
        cout: int,
        kernel: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        transposed: bool = False,
    ) -> None:
        super().__init__()
        shape = (cin, cout, kernel) if transposed else (cout, cin, kernel)
        self.weight_v = nn.Parameter(torch.randn(shape) * 0.01)
        self.weight_g = nn.Parameter(
            self.weight_v.detach().norm(dim=(1, 2), keepdim=True)
        )
        self.bias = nn.Parameter(torch.zeros(cout))
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.transposed = transposed

    def weight(self) -> Tensor:
        return (
            self.weight_g * self.weight_v / self.weight_v.norm(dim=(1, 2), keepdim=True)
        )

    def forward(self, x: Tensor) -> Tensor:
        if self.transposed:
            return F.conv_transpose1d(
                x, self.weight(), self.bias, self.stride, self.padding
            )
        return F.conv1d(
            x, self.weight(), self.bias, self.stride, self.padding, self.dilation
        )


class ChannelNorm(nn.Module):
    """modules.LayerNorm: LayerNorm over the channel axis of [B,C,T]."""

    def __init__(self, channels: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(channels))
        self.beta = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        x = F.layer_norm(
            x.transpose(1, 2), self.gamma.shape, self.gamma, self.beta, self.eps
        )
        return x.transpose(1, 2)


def pair_bias(mask_q: Tensor, mask_k: Tensor) -> Tensor:
    """[B,1,Tq], [B,1,Tk] 0/1 masks -> additive [B,1,Tq,Tk] attention bias."""
    return (1.0 - mask_q.unsqueeze(-1) * mask_k.unsqueeze(-2)) * MASK_VALUE


def rel_to_abs(rel: Tensor) -> Tensor:
    """[B,H,T,2W+1] scores by relative offset -> [B,H,T,T] (zero off the band).

    Skew trick: padding each row by T and re-reading the flat buffer with a row
    width one shorter shifts row i right by i, placing offset c at column i+c."""
    b, h, t, m = rel.shape
    x = F.pad(rel, (0, t)).reshape(b, h, t * (t + m))
    x = F.pad(x, (0, m - 1)).reshape(b, h, t + 1, t + m - 1)
    return x[:, :, :t, REL_WINDOW : REL_WINDOW + t]


def abs_to_rel(weights: Tensor) -> Tensor:
    """[B,H,T,T] -> [B,H,T,2W+1] weights by relative offset (inverse skew)."""
    b, h, t, _ = weights.shape
    m = 2 * REL_WINDOW + 1
    x = F.pad(weights, (REL_WINDOW, REL_WINDOW)).reshape(b, h, t * (t + m - 1))
    x = F.pad(x, (0, t)).reshape(b, h, t, t + m)
    return x[:, :, :, :m]


class MultiHeadAttention(nn.Module):
    """attentions.MultiHeadAttention; relative positions when `window` is set."""

    def __init__(self, channels: int, heads: int, window: bool) -> None:
        super().__init__()
        self.heads, self.k_channels = heads, channels // heads
        self.conv_q = nn.Conv1d(channels, channels, 1)
        self.conv_k = nn.Conv1d(channels, channels, 1)
        self.conv_v = nn.Conv1d(channels, channels, 1)
        self.conv_o = nn.Conv1d(channels, channels, 1)
        self.window = window
        if window:
            shape = (1, 2 * REL_WINDOW + 1, self.k_channels)
            self.emb_rel_k = nn.Parameter(torch.randn(shape) * self.k_channels**-0.5)
            self.emb_rel_v = nn.Parameter(torch.randn(shape) * self.k_channels**-0.5)

    def _heads(self, x: Tensor) -> Tensor:
        b, _, t = x.shape
        return x.reshape(b, self.heads, self.k_channels, t).transpose(2, 3)

    def forward(self, x: Tensor, c: Tensor, bias: Tensor) -> Tensor:
        q = self._heads(self.conv_q(x)) * self.k_channels**-0.5
        k, v = self._heads(self.conv_k(c)), self._heads(self.conv_v(c))
        scores = torch.matmul(q, k.transpose(2, 3))
        if self.window:
            scores = scores + rel_to_abs(
                torch.matmul(q, self.emb_rel_k.transpose(1, 2))
            )
        p = torch.softmax(scores + bias, dim=-1)
        out = torch.matmul(p, v)
        if self.window:
            out = out + torch.matmul(abs_to_rel(p), self.emb_rel_v)
        b, _, t, _ = out.shape
        return self.conv_o(out.transpose(2, 3).reshape(b, -1, t))


class FFN(nn.Module):
    def __init__(self, channels: int, filters: int, kernel: int) -> None:
        super().__init__()
        if kernel % 2 != 1:  # upstream "same" padding is symmetric only for odd k
            raise ValueError(f"FFN kernel size must be odd, got {kernel}")
        self.conv_1 = nn.Conv1d(channels, filters, kernel, padding=kernel // 2)
        self.conv_2 = nn.Conv1d(filters, channels, kernel, padding=kernel // 2)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        x = torch.relu(self.conv_1(x * mask))
        return self.conv_2(x * mask) * mask


class Encoder(nn.Module):
    """attentions.Encoder (post-norm, relative self-attention, conv FFN)."""

    def __init__(
        self, channels: int, filters: int, heads: int, layers: int, kernel: int
    ):
        super().__init__()
        self.attn_layers = nn.ModuleList(
            MultiHeadAttention(channels, heads, window=True) for _ in range(layers)
        )
        self.norm_layers_1 = nn.ModuleList(ChannelNorm(channels) for _ in range(layers))
        self.ffn_layers = nn.ModuleList(
            FFN(channels, filters, kernel) for _ in range(layers)
        )
        self.norm_layers_2 = nn.ModuleList(ChannelNorm(channels) for _ in range(layers))

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        bias = pair_bias(mask, mask)
        x = x * mask
        for attn, norm1, ffn, norm2 in zip(
            self.attn_layers,
            self.norm_layers_1,
            self.ffn_layers,
            self.norm_layers_2,
            strict=True,
        ):
            x = norm1(x + attn(x, x, bias))
            x = norm2(x + ffn(x, mask))
        return x * mask


class MRTE(nn.Module):
    """mrte_model.MRTE: cross-attention from SSL frames to phones, plus ge512."""

    HEADS = 4  # upstream MRTE(n_heads=4)

    def __init__(self, content: int, hidden: int) -> None:
        super().__init__()
        self.cross_attention = MultiHeadAttention(hidden, self.HEADS, window=False)
        self.c_pre = nn.Conv1d(content, hidden, 1)
        self.text_pre = nn.Conv1d(content, hidden, 1)
        self.c_post = nn.Conv1d(hidden, content, 1)

    def forward(
        self, ssl: Tensor, ssl_mask: Tensor, text: Tensor, text_mask: Tensor, ge: Tensor
    ) -> Tensor:
        ssl = self.c_pre(ssl * ssl_mask)
        text = self.text_pre(text * text_mask)
        bias = pair_bias(ssl_mask, text_mask)
        x = self.cross_attention(ssl * ssl_mask, text * text_mask, bias) + ssl + ge
        return self.c_post(x * ssl_mask)


class ResBlock1(nn.Module):
    def __init__(self, channels: int, kernel: int, dilations: Sequence[int]) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(
            WNConv1d(
                channels, channels, kernel, padding=(kernel * d - d) // 2, dilation=d
            )
            for d in dilations
        )
        self.convs2 = nn.ModuleList(
            WNConv1d(channels, channels, kernel, padding=(kernel - 1) // 2)
            for _ in dilations
        )

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        for c1, c2 in zip(self.convs1, self.convs2, strict=True):
            xt = c1(F.leaky_relu(x, LRELU_SLOPE) * mask)
            x = x + c2(F.leaky_relu(xt, LRELU_SLOPE) * mask)
        return x * mask


class Generator(nn.Module):
    """models.Generator (HiFiGAN, ResBlock1) with a frame mask: masking every conv
    input reproduces the zero padding a full-length decode sees at the sequence
    end, so a window only partly filled with frames is still exact."""

    def __init__(
        self,
        cin: int,
        gin: int,
        initial: int,
        rates: Sequence[int],
        kernels: Sequence[int],
        rb_kernels: Sequence[int],
        rb_dilations: Sequence[Sequence[int]],
    ) -> None:
        super().__init__()
        self.rates, self.n_kernels = list(rates), len(rb_kernels)
        self.conv_pre = nn.Conv1d(cin, initial, 7, 1, padding=3)
        self.ups = nn.ModuleList(
            WNConv1d(
                initial >> i, initial >> (i + 1), k, u, (k - u) // 2, transposed=True
            )
            for i, (u, k) in enumerate(zip(rates, kernels, strict=True))
        )
        self.resblocks = nn.ModuleList(
            ResBlock1(initial >> (i + 1), k, d)
            for i in range(len(rates))
            for k, d in zip(rb_kernels, rb_dilations, strict=True)
        )
        self.conv_post = nn.Conv1d(
            initial >> len(rates), 1, 7, 1, padding=3, bias=False
        )
        self.cond = nn.Conv1d(gin, initial, 1)

    def forward(self, z: Tensor, ge: Tensor, mask: Tensor) -> Tensor:
        x = self.conv_pre(z * mask) + self.cond(ge)
        for i, rate in enumerate(self.rates):
            x = self.ups[i](F.leaky_relu(x, LRELU_SLOPE) * mask)
            b, _, t = mask.shape
            mask = mask.unsqueeze(-1).expand(b, 1, t, rate).reshape(b, 1, t * rate)
            blocks = self.resblocks[i * self.n_kernels : (i + 1) * self.n_kernels]
            x = sum(block(x, mask) for block in blocks) / self.n_kernels
        x = self.conv_post(F.leaky_relu(x, FINAL_LRELU_SLOPE) * mask)
        return torch.tanh(x)
