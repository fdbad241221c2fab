"""SoVITS's reverse flow (upstream module/models.py ResidualCouplingBlock with
modules.ResidualCouplingLayer, mean_only=True; docs/gpt-sovits.md, SoVITS decode, step
5), inference direction only.  Weight-norm convolutions keep upstream's keys."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scripts.gptsovits.models.vits_layers import WNConv1d

# models.SynthesizerTrn: flow = ResidualCouplingBlock(inter, hidden, 5, 1, 4).
FLOW_COUPLINGS, FLOW_KERNEL, FLOW_WN_LAYERS = 4, 5, 4


class _WN(nn.Module):
    def __init__(self, hidden: int, gin: int) -> None:
        super().__init__()
        self.hidden = hidden
        pad = (FLOW_KERNEL - 1) // 2
        self.in_layers = nn.ModuleList(
            WNConv1d(hidden, 2 * hidden, FLOW_KERNEL, padding=pad)
            for _ in range(FLOW_WN_LAYERS)
        )
        self.res_skip_layers = nn.ModuleList(
            WNConv1d(hidden, 2 * hidden if i < FLOW_WN_LAYERS - 1 else hidden, 1)
            for i in range(FLOW_WN_LAYERS)
        )
        self.cond_layer = WNConv1d(gin, 2 * hidden * FLOW_WN_LAYERS, 1)

    def forward(self, x: Tensor, mask: Tensor, g: Tensor) -> Tensor:
        g = self.cond_layer(g)
        out = torch.zeros_like(x)
        for i, (conv, res_skip) in enumerate(
            zip(self.in_layers, self.res_skip_layers, strict=True)
        ):
            a = conv(x) + g[:, 2 * self.hidden * i : 2 * self.hidden * (i + 1)]
            acts = torch.tanh(a[:, : self.hidden]) * torch.sigmoid(a[:, self.hidden :])
            r = res_skip(acts)
            if i < FLOW_WN_LAYERS - 1:
                x = (x + r[:, : self.hidden]) * mask
                out = out + r[:, self.hidden :]
            else:
                out = out + r
        return out * mask


class _Coupling(nn.Module):
    """modules.ResidualCouplingLayer, mean_only=True, reverse direction."""

    def __init__(self, channels: int, hidden: int, gin: int) -> None:
        super().__init__()
        self.half = channels // 2
        self.pre = nn.Conv1d(self.half, hidden, 1)
        self.enc = _WN(hidden, gin)
        self.post = nn.Conv1d(hidden, self.half, 1)

    def reverse(self, x: Tensor, mask: Tensor, g: Tensor) -> Tensor:
        x0, x1 = x.split(self.half, dim=1)
        h = self.enc(self.pre(x0) * mask, mask, g)
        x1 = (x1 - self.post(h) * mask) * mask
        return torch.cat([x0, x1], dim=1)


class _Flip(nn.Module):
    """Placeholder keeping upstream's flows.{1,3,5,7} indices; has no weights."""


class Flow(nn.Module):
    def __init__(self, channels: int, hidden: int, gin: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for _ in range(FLOW_COUPLINGS):
            layers += [_Coupling(channels, hidden, gin), _Flip()]
        self.flows = nn.ModuleList(layers)

    def reverse(self, x: Tensor, mask: Tensor, g: Tensor) -> Tensor:
        for layer in reversed(self.flows):
            # Flip = reverse the channel order; a constant-index gather exports
            # as a plain Gather instead of a negative-step Slice.
            if isinstance(layer, _Flip):
                x = x[:, torch.arange(x.shape[1] - 1, -1, -1)]
            else:
                x = layer.reverse(x, mask, g)
        return x
