"""The UnifiedVoice GPT's transformer as static graphs, from ``gpt.pth``.

Upstream's GPT is transformers' ``GPT2Model`` with its token and position
embeddings removed (``build_hf_gpt_transformer``): it runs on embeddings the
caller sums (gpt/prompt.py does that on the CPU), then ``ln_f``, then
UnifiedVoice's own ``final_norm`` and, for codes, ``mel_head``. Three graphs:

- ``GptPrefill``: the prompt rows (conditioning, text, start token) padded at
  the end of a row bucket; causal attention, so the padding is never read. It
  returns the logits of the row ``pick`` selects (one-hot) and every row's K/V.
- ``GptDecode``: one token per beam, the beams' K/V caches bound once
  (daemon/sdk/ar/kv.py), an additive mask over the cache positions.
- ``GptLatent``: upstream's ``UnifiedVoice.forward`` (the "latent" pass after
  generation): every row's ``final_norm`` output, no head.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

import torch
import torch.nn.functional as F
from torch import nn

from hexvoice_indextts.gpt.generate import MASK_VALUE
from hexvoice_indextts.graphs.weights import Weights, sub

#: transformers' GPT2Config.layer_norm_epsilon and nn.LayerNorm's default
#: (UnifiedVoice.final_norm)
LN_EPS: Final = 1e-5

PREFILL_INPUTS: Final = ("emb", "pick")
PREFILL_OUTPUTS: Final = ("logits", "k", "v")
DECODE_INPUTS: Final = ("x", "k_cache", "v_cache", "mask")
DECODE_OUTPUTS: Final = ("logits", "k_new", "v_new")
LATENT_INPUTS: Final = ("emb",)
LATENT_OUTPUTS: Final = ("latent",)


#: the tanh approximation's cubic coefficient (transformers NewGELUActivation)
GELU_CUBIC: Final = 0.044715


def gelu_new(x: torch.Tensor) -> torch.Tensor:
    """GPT-2's activation (transformers ``NewGELUActivation``, the tanh form,
    its ``pow(x, 3)`` kept)."""
    inner = math.sqrt(2.0 / math.pi) * (x + GELU_CUBIC * x**3)
    return 0.5 * x * (1.0 + torch.tanh(inner))


class _Transformer(nn.Module):
    """GPT2Model's blocks and ``ln_f``, UnifiedVoice's ``final_norm`` and
    ``mel_head``, from UnifiedVoice's state dict."""

    def __init__(self, state: Mapping[str, torch.Tensor], heads: int) -> None:
        super().__init__()
        self.p = Weights(
            {
                **sub(state, "gpt."),
                **{f"final_norm.{k}": v for k, v in sub(state, "final_norm.").items()},
                **{f"mel_head.{k}": v for k, v in sub(state, "mel_head.").items()},
            }
        )
        self.layers = sum(
            1 for k in state if k.startswith("gpt.h.") and k.endswith(".ln_1.weight")
        )
        self.width = state["final_norm.weight"].shape[0]
        self.heads = heads
        self.head_dim = self.width // heads

    def _ln(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.layer_norm(
            x,
            (self.width,),
            self.p.w(f"{name}.weight"),
            self.p.w(f"{name}.bias"),
            LN_EPS,
        )

    def _conv1d(self, x: torch.Tensor, name: str) -> torch.Tensor:
        # transformers' Conv1D: weight [in, out]
        return x @ self.p.w(f"{name}.weight") + self.p.w(f"{name}.bias")

    def qkv(
        self, i: int, h: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """[B, T, d] -> q, k, v [B, heads, T, head_dim]."""
        b, t, _ = h.shape
        a = self._conv1d(self._ln(h, f"h.{i}.ln_1"), f"h.{i}.attn.c_attn")
        q, k, v = a.split(self.width, dim=2)
        return tuple(
            x.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
            for x in (q, k, v)
        )  # type: ignore[return-value]

    def finish(self, i: int, h: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """The block's residuals after attention: ``ctx`` [B, heads, T, head_dim]."""
        b, _, t, _ = ctx.shape
        ctx = ctx.transpose(1, 2).reshape(b, t, self.width)
        h = h + self._conv1d(ctx, f"h.{i}.attn.c_proj")
        m = gelu_new(self._conv1d(self._ln(h, f"h.{i}.ln_2"), f"h.{i}.mlp.c_fc"))
        return h + self._conv1d(m, f"h.{i}.mlp.c_proj")

    def normed(self, h: torch.Tensor) -> torch.Tensor:
        return self._ln(self._ln(h, "ln_f"), "final_norm")

    def head(self, h: torch.Tensor) -> torch.Tensor:
        return F.linear(h, self.p.w("mel_head.weight"), self.p.w("mel_head.bias"))

    def causal(
        self, emb: torch.Tensor
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """Every row through every block, causal: hidden [B, T, d] and each
        layer's K/V."""
        t = emb.shape[1]
        mask = torch.full((t, t), MASK_VALUE).triu(1)
        scale = 1.0 / math.sqrt(self.head_dim)
        h, ks, vs = emb, [], []
        for i in range(self.layers):
            q, k, v = self.qkv(i, h)
            w = torch.softmax(
                q @ k.transpose(-1, -2) * scale + mask.to(q.dtype), dim=-1
            )
            h = self.finish(i, h, w @ v)
            ks.append(k)
            vs.append(v)
        return h, ks, vs


class GptPrefill(nn.Module):
    """``forward(emb [1, P, d], pick [1, P]) -> logits [1, V], k, v
    [layers, 1, heads, P, head_dim]``."""

    def __init__(self, state: Mapping[str, torch.Tensor], heads: int) -> None:
        super().__init__()
        self.t = _Transformer(state, heads)

    def forward(
        self, emb: torch.Tensor, pick: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        h, ks, vs = self.t.causal(emb)
        last = pick @ h[0]  # one-hot: the prompt's last real row, exactly
        return self.t.head(self.t.normed(last)), torch.stack(ks), torch.stack(vs)


class GptDecode(nn.Module):
    """``forward(x [B, 1, d], k_cache, v_cache [layers, B, heads, L, head_dim],
    mask [1, L]) -> logits [B, V], k_new, v_new [layers, B, heads, 1,
    head_dim]``: each beam's next token against its own cache."""

    def __init__(self, state: Mapping[str, torch.Tensor], heads: int) -> None:
        super().__init__()
        self.t = _Transformer(state, heads)

    def forward(
        self,
        x: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        mask: torch.Tensor,
    ) -> tuple[torch.Tensor, ...]:
        t = self.t
        scale = 1.0 / math.sqrt(t.head_dim)
        h, ks, vs = x, [], []
        for i in range(t.layers):
            q, k, v = t.qkv(i, h)
            past = q @ k_cache[i].transpose(-1, -2) * scale + mask  # [B, H, 1, L]
            own = (q * k).sum(-1, keepdim=True) * scale  # [B, H, 1, 1]
            w = torch.softmax(torch.cat([past, own], dim=-1), dim=-1)
            ctx = w[..., :-1] @ v_cache[i] + w[..., -1:] * v
            h = t.finish(i, h, ctx)
            ks.append(k)
            vs.append(v)
        return t.head(t.normed(h))[:, 0], torch.stack(ks), torch.stack(vs)


class GptLatent(nn.Module):
    """``forward(emb [1, P, d]) -> latent [1, P, d]``: ``final_norm`` of every
    row (the rows past the real ones are the padding's, and cut off); with
    ``gpt_layer`` (s2mel.pth's three linears), ``gpt_layer`` of it [1, P,
    1024], as infer_v2 applies it next."""

    def __init__(
        self,
        state: Mapping[str, torch.Tensor],
        heads: int,
        gpt_layer: Mapping[str, torch.Tensor] | None = None,
    ) -> None:
        super().__init__()
        self.t = _Transformer(state, heads)
        self.gpt_layer = None if gpt_layer is None else Weights(gpt_layer)
        self.linears = 0 if gpt_layer is None else len(gpt_layer) // 2

    def forward(self, emb: torch.Tensor) -> torch.Tensor:
        h = self.t.normed(self.t.causal(emb)[0])
        if self.gpt_layer is not None:
            for i in range(self.linears):  # nn.Sequential of Linears, no activation
                h = F.linear(
                    h, self.gpt_layer.w(f"{i}.weight"), self.gpt_layer.w(f"{i}.bias")
                )
        return h
