"""s2mel's flow-matching estimator (``DiT`` with its wavenet head) as a static
graph per mel-frame bucket, one Euler step's velocity with classifier-free
guidance folded in, from ``s2mel.pth``'s ``cfm.estimator``.

Upstream runs the estimator on the clip's exact frame count, so nothing in it
is masked. A bucket pads frames after the real ones; what reads across frames
must not see them:

- attention: masked keys (``MASK_VALUE``);
- the wavenet's convolutions pad with *reflection* (``SConv1d``'s default), at
  the real end: the frames are gathered by ``reflect``, an index the CPU
  writes (``voice/frames.reflect_index``), so the frames past the end are the
  mirrored real ones, as upstream's padding;
- its input is masked too (upstream's first layer reads the transformer's
  output unmasked, but no padding exists there).

The timestep's sinusoid is computed on the CPU in float32 (``t_freq``):
``cos(1000 t f)`` reaches arguments of 1000, past what fp16 resolves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import torch
import torch.nn.functional as F
from torch import nn

from hexvoice_indextts.graphs.gpt import MASK_VALUE
from hexvoice_indextts.graphs.weights import Weights, sub
from hexvoice_indextts.model_dir.config import Dit, Wavenet

INPUTS: Final = ("x", "prompt_x", "cond", "style", "t_freq", "mask", "reflect")
#: TimestepEmbedder's frequency_embedding_size (its default; the sinusoid's width)
TIME_FREQS: Final = 256
OUTPUT: Final = "velocity"
#: infer_v2's classifier-free guidance rate (hard-coded in infer_generator)
CFG_RATE: Final = 0.7
#: gpt_fast ModelArgs: RMSNorm eps and the rotary base; the DiT's positions
ROPE_BASE: Final = 10000
RMS_EPS: Final = 1e-5
#: FinalLayer's LayerNorm (no affine)
FINAL_EPS: Final = 1e-6


def plain_layer_norm(x: torch.Tensor, eps: float) -> torch.Tensor:
    """LayerNorm without affine over the last axis, as explicit mean and
    variance: exported as ONNX LayerNormalization it came out of the x86 HTP
    simulator 11.5 dB from the CPU on the DiT's [2, frames, 40] (with or
    without an explicit scale and bias, eps 1e-6 or 1e-5); this form, 50 dB."""
    d = x - x.mean(-1, keepdim=True)
    return d * torch.rsqrt((d * d).mean(-1, keepdim=True) + eps)


def weight_norm(g: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """torch.nn.utils.weight_norm's weight (dim 0)."""
    return torch._weight_norm(v, g, 0)


def rotary_table(rows: int, head_dim: int) -> torch.Tensor:
    """gpt_fast ``precompute_freqs_cis`` rows [rows, head_dim / 2, 2] (cos, sin)."""
    freqs = 1.0 / (
        ROPE_BASE ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim)
    )
    angles = torch.outer(torch.arange(rows), freqs)
    cis = torch.polar(torch.ones_like(angles), angles)
    return torch.stack([cis.real, cis.imag], dim=-1)


def rotate(x: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """gpt_fast ``apply_rotary_emb`` on x [B, T, heads, head_dim]: pairs of
    adjacent channels."""
    xs = x.reshape(*x.shape[:-1], -1, 2)
    c = table.view(1, xs.shape[1], 1, xs.shape[3], 2)
    out = torch.stack(
        [
            xs[..., 0] * c[..., 0] - xs[..., 1] * c[..., 1],
            xs[..., 1] * c[..., 0] + xs[..., 0] * c[..., 1],
        ],
        -1,
    )
    return out.flatten(3)


class MaskedDiT(nn.Module):
    """``forward(x, prompt_x [1, 80, F], cond [1, F, content_dim], style [1,
    192], t_freq [1, 256], mask [1, F], reflect [F + 2 pad]) -> velocity [1,
    80, F]``: ``(1 + 0.7) * v(cond) - 0.7 * v(no prompt, cond, style)``."""

    def __init__(
        self, state: Mapping[str, torch.Tensor], dit: Dit, wn: Wavenet, frames: int
    ) -> None:
        super().__init__()
        self.p = Weights(state)
        self.depth, self.heads, self.width = dit.depth, dit.num_heads, dit.hidden_dim
        self.head_dim = self.width // self.heads
        self.uvit = dit.uvit_skip_connection
        self.wn_layers, self.wn_width = wn.num_layers, wn.hidden_dim
        self.kernel, self.rate = wn.kernel_size, wn.dilation_rate
        self.register_buffer("rope", rotary_table(frames, self.head_dim))
        self.frames = frames

    @property
    def max_pad(self) -> int:
        return (self.kernel - 1) * self.rate ** (self.wn_layers - 1) // 2

    def _lin(self, x: torch.Tensor, name: str, bias: bool = True) -> torch.Tensor:
        b = self.p.w(f"{name}.bias") if bias else None
        return F.linear(x, self.p.w(f"{name}.weight"), b)

    def _wn_lin(self, x: torch.Tensor, name: str) -> torch.Tensor:
        w = weight_norm(self.p.w(f"{name}.weight_g"), self.p.w(f"{name}.weight_v"))
        return F.linear(x, w, self.p.w(f"{name}.bias"))

    def _ada_rms(self, x: torch.Tensor, c: torch.Tensor, name: str) -> torch.Tensor:
        weight, bias = self._lin(c, f"{name}.project_layer").split(self.width, dim=-1)
        normed = x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + RMS_EPS)
        return weight * (normed * self.p.w(f"{name}.norm.weight")) + bias

    def _attention(self, i: int, x: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        name = f"transformer.layers.{i}.attention"
        q, k, v = self._lin(x, f"{name}.wqkv", bias=False).split(self.width, dim=-1)
        q, k, v = (y.view(b, t, self.heads, self.head_dim) for y in (q, k, v))
        q, k = rotate(q, self.rope), rotate(k, self.rope)
        q, k, v = (y.transpose(1, 2) for y in (q, k, v))
        w = torch.softmax(q @ k.transpose(-1, -2) / self.head_dim**0.5 + keys, dim=-1)
        y = (w @ v).transpose(1, 2).reshape(b, t, self.width)
        return self._lin(y, f"{name}.wo", bias=False)

    def _transformer(
        self, x: torch.Tensor, c: torch.Tensor, keys: torch.Tensor
    ) -> torch.Tensor:
        emit = (
            [i for i in range(self.depth) if i < self.depth // 2] if self.uvit else []
        )
        receive = (
            [i for i in range(self.depth) if i > self.depth // 2] if self.uvit else []
        )
        skips = []
        for i in range(self.depth):
            layer = f"transformer.layers.{i}"
            if i in receive:
                x = self._lin(
                    torch.cat([x, skips.pop(-1)], dim=-1), f"{layer}.skip_in_linear"
                )
            h = x + self._attention(
                i, self._ada_rms(x, c, f"{layer}.attention_norm"), keys
            )
            f = self._ada_rms(h, c, f"{layer}.ffn_norm")
            ff = f"{layer}.feed_forward"
            x = h + self._lin(
                F.silu(self._lin(f, f"{ff}.w1", False))
                * self._lin(f, f"{ff}.w3", False),
                f"{ff}.w2",
                False,
            )
            if i in emit:
                skips.append(x)
        return self._ada_rms(x, c, "transformer.norm")

    def _conv(
        self, x: torch.Tensor, name: str, reflect: torch.Tensor, dilation: int
    ) -> torch.Tensor:
        """SConv1d: reflection padding at the clip's ends, then the conv."""
        w = weight_norm(
            self.p.w(f"{name}.conv.conv.weight_g"),
            self.p.w(f"{name}.conv.conv.weight_v"),
        )
        pad = (w.shape[-1] - 1) * dilation // 2
        if pad:
            start = self.max_pad - pad
            x = x.index_select(2, reflect[start : start + self.frames + 2 * pad])
        return F.conv1d(x, w, self.p.w(f"{name}.conv.conv.bias"), dilation=dilation)

    def _wavenet(
        self, x: torch.Tensor, m: torch.Tensor, g: torch.Tensor, reflect: torch.Tensor
    ) -> torch.Tensor:
        h = self.wn_width
        g = self._conv(g, "wavenet.cond_layer", reflect, 1)
        out = torch.zeros_like(x)
        for i in range(self.wn_layers):
            x_in = self._conv(x, f"wavenet.in_layers.{i}", reflect, self.rate**i)
            a = x_in + g[:, 2 * h * i : 2 * h * (i + 1)]
            acts = torch.tanh(a[:, :h]) * torch.sigmoid(a[:, h:])
            rs = self._conv(acts, f"wavenet.res_skip_layers.{i}", reflect, 1)
            if i < self.wn_layers - 1:
                x = (x + rs[:, :h]) * m
                out = out + rs[:, h:]
            else:
                out = out + rs
        return out * m

    def _timestep(self, t_freq: torch.Tensor, name: str) -> torch.Tensor:
        return self._lin(F.silu(self._lin(t_freq, f"{name}.mlp.0")), f"{name}.mlp.2")

    def forward(
        self,
        x: torch.Tensor,
        prompt_x: torch.Tensor,
        cond: torch.Tensor,
        style: torch.Tensor,
        t_freq: torch.Tensor,
        mask: torch.Tensor,
        reflect: torch.Tensor,
    ) -> torch.Tensor:
        # the guided and the unguided pass as one batch of 2, as upstream stacks them
        x2 = torch.cat([x, x]).transpose(1, 2)
        prompt2 = torch.cat([prompt_x, torch.zeros_like(prompt_x)]).transpose(1, 2)
        cond2 = self._lin(torch.cat([cond, torch.zeros_like(cond)]), "cond_projection")
        style2 = torch.cat([style, torch.zeros_like(style)])
        t2 = torch.cat([t_freq, t_freq])
        t1 = self._timestep(t2, "t_embedder")
        frames = x2.shape[1]
        x_in = torch.cat(
            [x2, prompt2, cond2, style2[:, None, :].expand(-1, frames, -1)], dim=-1
        )
        x_in = self._lin(x_in, "cond_x_merge_linear")
        keys = ((1.0 - mask) * MASK_VALUE)[:, None, None, :]
        res = self._transformer(x_in, t1[:, None], keys)
        res = self._lin(torch.cat([res, x2], dim=-1), "skip_linear")
        m = mask[:, None, :]
        h = self._lin(res, "conv1").transpose(1, 2) * m
        g = self._timestep(t2, "t_embedder2")[:, :, None]
        h = self._wavenet(h, m, g, reflect).transpose(1, 2) + self._lin(
            res, "res_projection"
        )
        shift, scale = self._lin(F.silu(t1), "final_layer.adaLN_modulation.1").chunk(
            2, dim=1
        )
        h = plain_layer_norm(h, FINAL_EPS) * (1 + scale[:, None]) + shift[:, None]
        h = self._wn_lin(h, "final_layer.linear").transpose(1, 2)
        v = F.conv1d(h, self.p.w("conv2.weight"), self.p.w("conv2.bias"))
        return (1.0 + CFG_RATE) * v[:1] - CFG_RATE * v[1:]


def estimator_state(
    s2mel_net: Mapping[str, Mapping[str, torch.Tensor]],
) -> dict[str, torch.Tensor]:
    """``cfm``'s estimator weights from s2mel.pth's ``net``."""
    return sub(s2mel_net["cfm"], "estimator.")
