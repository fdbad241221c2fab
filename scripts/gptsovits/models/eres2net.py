"""ERes2NetV2, the speaker-verification embedding of SoVITS v2Pro, from its
published architecture (3D-Speaker ERes2NetV2; upstream GPT_SoVITS/eres2net),
run as upstream's sv.py runs it: ``forward3`` (no pooling head), fbank
[B, T, 80] -> [B, channels x frequency] averaged over time
(docs/gpt-sovits.md, speaker verification).

Module and parameter names are upstream's, so its state dict
(pretrained_eres2netv2w24s4ep4.ckpt) loads as is; the unused pooling head
(``seg_1``) is dropped. Sizes are read from the weights, so the tiny test model
(scripts/gptsovits/synthetic/sv.py) loads through the same code.

An optional 0/1 frame mask makes a padded static input give exactly the
unpadded result: every 3x3 convolution (the only ops mixing time) sees zeros
past the valid frames, as its zero padding does on the unpadded input, and the
mean runs over valid frames only. A stride-2 layer keeps frame 2j, so the
mask at each resolution is the previous one's even frames.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn
from torch.nn.utils.fusion import fuse_conv_bn_eval

#: kaldi fbank bins (sv.py num_mel_bins=80)
FEAT_DIM = 80
#: Hardtanh(0, 20): the blocks' "ReLU" in ERes2NetV2.py
CLIP_MAX = 20.0
#: AFF(channels, r=4) everywhere in ERes2NetV2
AFF_REDUCTION = 4
#: three stride-2 stages after layer1 (80 -> 40 -> 20 -> 10 bins)
DOWNSAMPLINGS = 3
#: the published head (TSTP pooling + seg_1 Linear), unused by forward3
UNUSED_PREFIXES = ("seg_1.", "seg_2.", "seg_bn_1.")
LAYERS = 4


@dataclass(frozen=True)
class Eres2NetDims:
    m_channels: int  # stem width (published 64)
    expansion: int  # block output = planes x expansion (published 4)
    scale: int  # splits per block (published 4)
    widths: tuple[int, ...]  # split width per layer: floor(planes x baseWidth / 64)
    num_blocks: tuple[int, ...]  # published (3, 4, 6, 3)

    @classmethod
    def published(
        cls,
        m_channels: int = 64,
        base_width: int = 24,
        scale: int = 4,
        expansion: int = 4,
        num_blocks: tuple[int, ...] = (3, 4, 6, 3),
    ) -> Eres2NetDims:
        """sv.py: ERes2NetV2(baseWidth=24, scale=4, expansion=4), m_channels 64."""
        planes = [m_channels * 2**i for i in range(LAYERS)]
        widths = tuple(p * base_width // 64 for p in planes)
        if min(widths) < 1:
            raise ValueError(f"baseWidth {base_width} leaves a layer 0 channels wide")
        return cls(m_channels, expansion, scale, widths, tuple(num_blocks))

    @classmethod
    def from_state(cls, state: Mapping[str, Tensor]) -> Eres2NetDims:
        try:
            m = state["conv1.weight"].shape[0]
            widths = tuple(
                state[f"layer{i + 1}.0.convs.0.weight"].shape[0] for i in range(LAYERS)
            )
            blocks = tuple(
                len({k.split(".")[1] for k in state if k.startswith(f"layer{i + 1}.")})
                for i in range(LAYERS)
            )
            return cls(
                m_channels=m,
                expansion=state["layer1.0.conv3.weight"].shape[0] // m,
                scale=state["layer1.0.conv1.weight"].shape[0] // widths[0],
                widths=widths,
                num_blocks=blocks,
            )
        except KeyError as exc:
            raise ValueError(f"not an ERes2NetV2 state dict: no {exc}") from exc

    @property
    def out_channels(self) -> int:
        return self.m_channels * 2 ** (LAYERS - 1) * self.expansion

    @property
    def embedding(self) -> int:
        """forward3's width: channels x frequency bins (published 2048 x 10)."""
        freq = FEAT_DIM
        for _ in range(DOWNSAMPLINGS):
            freq = (freq + 1) // 2
        return self.out_channels * freq


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1) -> list[nn.Module]:
    conv = nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)
    return [conv, nn.BatchNorm2d(cout)]


def _masked(x: Tensor, mask: Tensor | None) -> Tensor:
    return x if mask is None else x * mask


def _down(mask: Tensor | None, stride: int) -> Tensor | None:
    return mask if mask is None or stride == 1 else mask[..., ::stride]


class AFF(nn.Module):
    """Attentional feature fusion: att = 1 + tanh(local_att([x, y]));
    x * att + y * (2 - att)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        inter = channels // AFF_REDUCTION
        self.local_att = nn.Sequential(
            nn.Conv2d(2 * channels, inter, 1),
            nn.BatchNorm2d(inter),
            nn.SiLU(),
            nn.Conv2d(inter, channels, 1),
            nn.BatchNorm2d(channels),
        )

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        att = 1.0 + torch.tanh(self.local_att(torch.cat((x, y), dim=1)))
        return x * att + y * (2.0 - att)


class Block(nn.Module):
    """BasicBlockERes2NetV2 (``fuse=False``: splits summed) or its AFF variant
    (splits fused by AFF)."""

    def __init__(
        self,
        cin: int,
        planes: int,
        stride: int,
        width: int,
        d: Eres2NetDims,
        fuse: bool,
    ) -> None:
        super().__init__()
        cout = planes * d.expansion
        self.width, self.scale = width, d.scale
        self.conv1, self.bn1 = _conv_bn(cin, width * d.scale, 1, stride)
        self.convs = nn.ModuleList(
            nn.Conv2d(width, width, 3, padding=1, bias=False) for _ in range(d.scale)
        )
        self.bns = nn.ModuleList(nn.BatchNorm2d(width) for _ in range(d.scale))
        if fuse:
            self.fuse_models = nn.ModuleList(AFF(width) for _ in range(d.scale - 1))
        self.fuse = fuse
        self.conv3, self.bn3 = _conv_bn(width * d.scale, cout, 1)
        short = stride != 1 or cin != cout
        self.shortcut = nn.Sequential(*_conv_bn(cin, cout, 1, stride) if short else ())
        self.act = nn.Hardtanh(0.0, CLIP_MAX)

    def forward(self, x: Tensor, mask: Tensor | None) -> Tensor:
        """``mask`` is at the output's (possibly strided) resolution."""
        splits = self.act(self.bn1(self.conv1(x))).split(self.width, dim=1)
        outs: list[Tensor] = []
        for i, part in enumerate(splits):
            if i == 0:
                sp = part
            elif self.fuse:
                sp = self.fuse_models[i - 1](sp, part)
            else:
                sp = sp + part
            sp = self.act(self.bns[i](self.convs[i](_masked(sp, mask))))
            outs.append(sp)
        out = self.bn3(self.conv3(torch.cat(outs, dim=1)))
        return self.act(out + self.shortcut(x))


class ERes2NetV2(nn.Module):
    """ERes2NetV2.forward3 with an optional frame mask [B, T] (1 valid, 0 pad)."""

    def __init__(self, d: Eres2NetDims) -> None:
        super().__init__()
        self.dims = d
        m = d.m_channels
        self.conv1, self.bn1 = _conv_bn(1, m, 3)
        cin = m
        for i in range(LAYERS):
            planes, stride = m * 2**i, 1 if i == 0 else 2
            blocks = []
            for j in range(d.num_blocks[i]):
                fuse = i >= 2  # layer3 and layer4 use the AFF blocks
                blocks.append(
                    Block(cin, planes, stride if j == 0 else 1, d.widths[i], d, fuse)
                )
                cin = planes * d.expansion
            self.add_module(f"layer{i + 1}", nn.Sequential(*blocks))
        c3 = m * 4 * d.expansion
        self.layer3_ds = nn.Conv2d(c3, 2 * c3, 3, stride=2, padding=1, bias=False)
        self.fuse34 = AFF(d.out_channels)

    @classmethod
    def from_state(cls, state: Mapping[str, Tensor], source: str = "sv") -> ERes2NetV2:
        model = cls(Eres2NetDims.from_state(state))
        used = {k: v for k, v in state.items() if not k.startswith(UNUSED_PREFIXES)}
        missing, unexpected = model.load_state_dict(used, strict=False)
        if missing or unexpected:
            raise ValueError(
                f"{source}: not an ERes2NetV2 checkpoint: missing {missing[:5]}, "
                f"unexpected {unexpected[:5]}"
            )
        return model.eval()

    def _layer(
        self, i: int, x: Tensor, mask: Tensor | None
    ) -> tuple[Tensor, Tensor | None]:
        for j, block in enumerate(getattr(self, f"layer{i + 1}")):
            if j == 0 and i > 0:
                mask = _down(mask, 2)
            x = block(x, mask)
        return x, mask

    def forward(self, feats: Tensor, mask: Tensor | None = None) -> Tensor:
        """fbank [B, T, 80] (+ mask [B, T]) -> embedding [B, channels x 10]."""
        x = feats.transpose(1, 2).unsqueeze(1)  # [B, 1, F, T]
        m = None if mask is None else mask[:, None, None, :].to(x.dtype)
        x = torch.relu(self.bn1(self.conv1(_masked(x, m))))  # the stem: plain ReLU
        x, m = self._layer(0, x, m)
        x, m = self._layer(1, x, m)
        out3, m3 = self._layer(2, x, m)
        out4, m4 = self._layer(3, out3, m3)
        fused = self.fuse34(out4, self.layer3_ds(_masked(out3, m3)))
        flat = fused.flatten(1, 2)  # [B, C x F', T']
        if m4 is None:
            return flat.mean(-1)
        m4 = m4[:, 0]  # [B, 1, T']
        return (flat * m4).sum(-1) / m4.sum(-1)


def load_sv_checkpoint(path: Path) -> ERes2NetV2:
    """Upstream's pretrained_eres2netv2w24s4ep4.ckpt (a plain state dict, as
    sv.py loads it) or the tiny one scripts/gptsovits/synthetic/sv.py writes."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, pickle.UnpicklingError) as exc:
        raise ValueError(f"{path}: cannot read an sv checkpoint: {exc}") from exc
    if not isinstance(state, Mapping):
        raise ValueError(f"{path}: an sv checkpoint is a state dict, got {type(state)}")
    return ERes2NetV2.from_state(state, str(path))


def fold_batchnorm(model: ERes2NetV2) -> ERes2NetV2:
    """The model with every BatchNorm folded into the convolution before it (in
    place; eval mode): what the exported graph computes."""
    model.eval()

    def fold(owner: nn.Module, conv: str, bn: str) -> None:
        setattr(
            owner, conv, fuse_conv_bn_eval(getattr(owner, conv), getattr(owner, bn))
        )
        setattr(owner, bn, nn.Identity())

    fold(model, "conv1", "bn1")
    for module in model.modules():
        if isinstance(module, Block):
            fold(module, "conv1", "bn1")
            fold(module, "conv3", "bn3")
            for i in range(len(module.convs)):
                module.convs[i] = fuse_conv_bn_eval(module.convs[i], module.bns[i])
                module.bns[i] = nn.Identity()
            if len(module.shortcut):
                module.shortcut = nn.Sequential(
                    fuse_conv_bn_eval(module.shortcut[0], module.shortcut[1])
                )
        elif isinstance(module, AFF):
            att = module.local_att
            module.local_att = nn.Sequential(
                fuse_conv_bn_eval(att[0], att[1]),
                att[2],
                fuse_conv_bn_eval(att[3], att[4]),
            )
    return model
