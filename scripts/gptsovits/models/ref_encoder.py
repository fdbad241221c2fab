"""Reference (style) encoder of SoVITS v2Pro: upstream modules.MelStyleEncoder.

Without a mask it is one full-length reference, as upstream's decode calls it
(an all-ones mask). With a 0/1 frame mask [B, 1, T] a padded static input gives
the unpadded result: the GLU convolutions (the only ops mixing neighbouring
frames) see zeros past the valid frames, as their zero padding does on the
unpadded input; attention ignores padded keys; the mean runs over valid frames.
``RefEncGraph`` is the ``ref_enc`` NPU graph built on it.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

# modules.MelStyleEncoder defaults: 2 attention heads, GLU conv kernel 5.
REF_HEADS, REF_KERNEL = 2, 5
#: additive score for padded keys: exp() underflows to exactly 0 in float32
#: and the value stays finite in fp16 on the NPU (as VITS's masked -1e4)
KEY_MASK_SCORE = -1e4


class _Linear(nn.Module):
    """modules.LinearNorm / ConvNorm wrappers: keep the extra ".fc"/".conv" level."""

    def __init__(self, inner: nn.Module, name: str) -> None:
        super().__init__()
        self.add_module(name, inner)
        self.inner = name

    def forward(self, x: Tensor) -> Tensor:
        return getattr(self, self.inner)(x)


class _GLU(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        conv = nn.Conv1d(channels, 2 * channels, REF_KERNEL, padding=REF_KERNEL // 2)
        self.conv1 = _Linear(conv, "conv")

    def forward(self, x: Tensor) -> Tensor:
        a, b = self.conv1(x).chunk(2, dim=1)
        return x + a * torch.sigmoid(b)


class _StyleAttention(nn.Module):
    """modules.MultiHeadAttention of the style encoder (temperature sqrt(d_model))."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.w_qs, self.w_ks, self.w_vs = (nn.Linear(dim, dim) for _ in range(3))
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: Tensor, key_bias: Tensor | None = None) -> Tensor:
        """``key_bias`` [B, 1, 1, T]: 0 for valid keys, KEY_MASK_SCORE for padding."""
        b, t, d = x.shape
        split = [
            f(x).reshape(b, t, REF_HEADS, d // REF_HEADS).transpose(1, 2)
            for f in (self.w_qs, self.w_ks, self.w_vs)
        ]
        q, k, v = split
        scores = torch.matmul(q, k.transpose(2, 3)) / d**0.5
        if key_bias is not None:
            scores = scores + key_bias
        p = torch.softmax(scores, dim=-1)
        return self.fc(torch.matmul(p, v).transpose(1, 2).reshape(b, t, d)) + x


class MelStyleEncoder(nn.Module):
    """modules.MelStyleEncoder, optionally on a padded input with its mask."""

    def __init__(self, bins: int, hidden: int, out: int) -> None:
        super().__init__()
        self.spectral = nn.Sequential(
            _Linear(nn.Linear(bins, hidden), "fc"),
            nn.Mish(),
            nn.Identity(),
            _Linear(nn.Linear(hidden, hidden), "fc"),
            nn.Mish(),
            nn.Identity(),
        )
        self.temporal = nn.Sequential(_GLU(hidden), _GLU(hidden))
        self.slf_attn = _StyleAttention(hidden)
        self.fc = _Linear(nn.Linear(hidden, out), "fc")

    def forward(self, spec: Tensor, mask: Tensor | None = None) -> Tensor:
        """spec [B, bins, T] (+ mask [B, 1, T], 1 valid / 0 pad) -> [B, out, 1]."""
        x = self.spectral(spec.transpose(1, 2))
        if mask is None:
            x = self.temporal(x.transpose(1, 2)).transpose(1, 2)
            return self.fc(self.slf_attn(x)).mean(dim=1).unsqueeze(-1)
        m = mask.transpose(1, 2)  # [B, T, 1]
        h = x.transpose(1, 2) * mask
        for glu in self.temporal:
            h = glu(h) * mask
        key_bias = ((1.0 - mask) * KEY_MASK_SCORE).unsqueeze(1)  # [B, 1, 1, T]
        x = self.fc(self.slf_attn(h.transpose(1, 2), key_bias))
        return ((x * m).sum(dim=1) / m.sum(dim=1)).unsqueeze(-1)


class RefEncGraph(nn.Module):
    """The ``ref_enc`` graph: masked style encoder on the lowest ``bins`` bins,
    + sv_emb(sv) + PReLU -> ge, ge_to512(ge) -> ge512 (SynthesizerTrn.decode's
    get_ge, v2Pro branch). Takes the SovitsModel's own modules."""

    def __init__(
        self,
        ref_enc: MelStyleEncoder,
        sv_emb: nn.Linear,
        prelu: nn.PReLU,
        to512: nn.Linear,
    ) -> None:
        super().__init__()
        self.ref_enc, self.sv_emb, self.prelu, self.ge_to512 = (
            ref_enc,
            sv_emb,
            prelu,
            to512,
        )

    def forward(self, spec: Tensor, mask: Tensor, sv: Tensor) -> tuple[Tensor, Tensor]:
        """spec [1, bins, T] * mask [1, 1, T], sv [1, sv] -> ge [1, gin, 1],
        ge512 [1, mrte, 1]."""
        ge = self.ref_enc(spec * mask, mask) + self.sv_emb(sv).unsqueeze(-1)
        ge = self.prelu(ge)
        return ge, self.ge_to512(ge.transpose(1, 2)).transpose(1, 2)
