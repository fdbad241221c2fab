"""Reference (style) encoder of SoVITS v2Pro: upstream modules.MelStyleEncoder.

Runs on the PC only, once per reference clip (ge/ge512 are stored in the voice
bundle), so it is written for one full-length reference with an all-ones mask.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

# modules.MelStyleEncoder defaults: 2 attention heads, GLU conv kernel 5.
REF_HEADS, REF_KERNEL = 2, 5


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

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        split = [
            f(x).reshape(b, t, REF_HEADS, d // REF_HEADS).transpose(1, 2)
            for f in (self.w_qs, self.w_ks, self.w_vs)
        ]
        q, k, v = split
        p = torch.softmax(torch.matmul(q, k.transpose(2, 3)) / d**0.5, dim=-1)
        return self.fc(torch.matmul(p, v).transpose(1, 2).reshape(b, t, d)) + x


class MelStyleEncoder(nn.Module):
    """modules.MelStyleEncoder for one full-length reference (mask all ones)."""

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

    def forward(self, spec: Tensor) -> Tensor:
        x = self.spectral(spec.transpose(1, 2))
        x = self.temporal(x.transpose(1, 2)).transpose(1, 2)
        return self.fc(self.slf_attn(x)).mean(dim=1).unsqueeze(-1)
