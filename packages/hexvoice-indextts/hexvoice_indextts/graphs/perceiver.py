"""The GPT's perceiver resamplers (``gpt/perceiver.py``
``PerceiverResampler``): learned latents cross-attend to [latents; context]
over two layers of attention and a GEGLU feed-forward, then an RMSNorm.
The context's padded rows are masked keys (KEY_MASK; upstream fills
-float32 max), the latents always real.  Upstream's mask pads the context's
with True for the latents (``cond_mask_pad``), as here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import torch
import torch.nn.functional as F

from hexvoice_indextts.graphs.w2v_bert import KEY_MASK
from hexvoice_indextts.graphs.weights import Weights

#: PerceiverResampler's default depth, which IndexTTS-2 keeps (its head
#: width, 64 by default, is read from the weights)
DEPTH: Final = 2


class MaskedPerceiver(Weights):
    """``forward(context [1, R, dim_context], mask [1, R]) -> [1, latents, dim]``."""

    def __init__(self, state: Mapping[str, torch.Tensor], heads: int) -> None:
        super().__init__(state)
        self.heads = heads
        self.project = self.has("proj_context.weight")

    def forward(self, context: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.project:
            context = F.linear(
                context, self.w("proj_context.weight"), self.w("proj_context.bias")
            )
        latents = self.w("latents")[None].expand(context.shape[0], -1, -1)
        real = torch.ones(mask.shape[0], latents.shape[1], dtype=mask.dtype)
        key_bias = ((1.0 - torch.cat([real, mask], dim=1)) * KEY_MASK)[:, None, None, :]
        for i in range(DEPTH):
            a, f = f"layers.{i}.0.", f"layers.{i}.1."
            latents = self._attention(a, latents, context, key_bias) + latents
            h = F.linear(latents, self.w(f + "0.weight"), self.w(f + "0.bias"))
            x, gate = h.chunk(2, dim=-1)
            latents = (
                F.linear(F.gelu(gate) * x, self.w(f + "2.weight"), self.w(f + "2.bias"))
                + latents
            )
        gamma = self.w("norm.gamma")
        return F.normalize(latents, dim=-1) * (latents.shape[-1] ** 0.5) * gamma

    def _attention(
        self,
        k: str,
        latents: torch.Tensor,
        context: torch.Tensor,
        key_bias: torch.Tensor,
    ) -> torch.Tensor:
        kv_in = torch.cat([latents, context], dim=1)
        q = F.linear(latents, self.w(k + "to_q.weight"))
        key, value = F.linear(kv_in, self.w(k + "to_kv.weight")).chunk(2, dim=-1)

        def heads(y: torch.Tensor) -> torch.Tensor:
            return y.reshape(y.shape[0], y.shape[1], self.heads, -1).transpose(1, 2)

        q, key, value = heads(q), heads(key), heads(value)
        scores = q @ key.transpose(-2, -1) * (q.shape[-1] ** -0.5)
        out = F.softmax(scores + key_bias, dim=-1) @ value
        out = out.transpose(1, 2).reshape(latents.shape[0], latents.shape[1], -1)
        return F.linear(out, self.w(k + "to_out.weight"))
