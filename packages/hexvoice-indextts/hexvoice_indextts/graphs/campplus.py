"""CAM++ (the speaker-style encoder IndexTTS-2 takes from 3D-Speaker) as a
static graph: fbank frames padded to a bucket, and a 0/1 frame mask that makes
the result the unpadded clip's.

Upstream (``indextts/s2mel/modules/campplus``) runs the clip at its own length.
A static graph sees the clip's frames and zeros after them; what would differ:

- every convolution over time would read padded frames past the clip's end
  where upstream reads its zero padding, so every layer's output is masked
  before the next one reads it (batch norms turn zeros into their bias);
- the CAM layers' context is the mean over time plus ``avg_pool1d`` over
  100-frame segments with ``ceil_mode`` (the last, partial segment is averaged
  over its real frames only): both are taken over real frames here, by a
  segment matrix built from the bucket and the mask;
- the statistics pooling (mean and unbiased standard deviation over time)
  likewise.

After the stride-2 TDNN layer the mask is every other frame's: output frame t
reads input frames up to 2t + 2, and is real when 2t is.

The module mirrors upstream's names, so upstream's checkpoint
(``campplus_cn_common.bin``, a plain state dict) loads with ``strict=True``.
"""

from __future__ import annotations

import math
from typing import Final

import torch
import torch.nn.functional as F
from torch import nn

#: CAMPPlus's defaults, which infer_v2 keeps (it sets only feat_dim and
#: embedding_size): FCM widths, the three dense blocks' depths, kernels,
#: dilations, and growth (DTDNN.py)
FEAT_DIM: Final = 80
EMBEDDING: Final = 192
HEAD_CHANNELS: Final = 32
HEAD_BLOCKS: Final = (2, 2)
INIT_CHANNELS: Final = 128
GROWTH: Final = 32
BN_SIZE: Final = 4
BLOCKS: Final = ((12, 3, 1), (24, 3, 2), (16, 3, 2))
TDNN_KERNEL: Final = 5
TDNN_STRIDE: Final = 2
#: CAMLayer.seg_pooling's segment length and the CAM bottleneck's reduction
SEGMENT: Final = 100
REDUCTION: Final = 2


class BnRelu(nn.Module):
    """upstream's ``get_nonlinear('batchnorm-relu')`` (or ``'batchnorm_'``:
    no affine, no relu)."""

    def __init__(self, channels: int, affine: bool = True, relu: bool = True) -> None:
        super().__init__()
        self.batchnorm = nn.BatchNorm1d(channels, affine=affine)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.batchnorm(x)
        return F.relu(x) if self.relu else x


class ResBlock(nn.Module):
    """BasicResBlock: two 3x3 convolutions over (frequency, time), frequency
    strided."""

    def __init__(self, cin: int, c: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, c, 3, stride=(stride, 1), padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != c:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, c, 1, stride=(stride, 1), bias=False), nn.BatchNorm2d(c)
            )

    def forward(self, x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x))) * m
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x)) * m


class Head(nn.Module):
    """FCM: a 2-d residual front end, frequency reduced 8x, flattened."""

    def __init__(self) -> None:
        super().__init__()
        c = HEAD_CHANNELS
        self.conv1 = nn.Conv2d(1, c, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.layer1 = nn.ModuleList(
            ResBlock(c, c, 2 if i == 0 else 1) for i in range(HEAD_BLOCKS[0])
        )
        self.layer2 = nn.ModuleList(
            ResBlock(c, c, 2 if i == 0 else 1) for i in range(HEAD_BLOCKS[1])
        )
        self.conv2 = nn.Conv2d(c, c, 3, stride=(2, 1), padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        m4 = m[:, None, None, :]
        out = F.relu(self.bn1(self.conv1(x.unsqueeze(1)))) * m4
        for block in (*self.layer1, *self.layer2):
            out = block(out, m4)
        out = F.relu(self.bn2(self.conv2(out))) * m4
        return out.reshape(out.shape[0], out.shape[1] * out.shape[2], out.shape[3])


class Tdnn(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        pad = (TDNN_KERNEL - 1) // 2
        self.linear = nn.Conv1d(
            cin, cout, TDNN_KERNEL, stride=TDNN_STRIDE, padding=pad, bias=False
        )
        self.nonlinear = BnRelu(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.nonlinear(self.linear(x))


def segments(frames: int, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(E [frames, S]: frame t is in segment t // SEGMENT, the real frames'
    share of each segment [frames, S]) for a mask ``m`` [1, 1, frames]."""
    count = math.ceil(frames / SEGMENT)
    seg = torch.arange(frames)[:, None] // SEGMENT
    e = (seg == torch.arange(count)[None, :]).to(m.dtype)
    real = e * m[0, 0][:, None]
    return e, real / real.sum(0, keepdim=True).clamp(min=1.0)


class CamLayer(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, dilation: int) -> None:
        super().__init__()
        pad = (kernel - 1) // 2 * dilation
        self.linear_local = nn.Conv1d(
            cin, cout, kernel, padding=pad, dilation=dilation, bias=False
        )
        self.linear1 = nn.Conv1d(cin, cin // REDUCTION, 1)
        self.linear2 = nn.Conv1d(cin // REDUCTION, cout, 1)

    def forward(
        self, x: torch.Tensor, m: torch.Tensor, seg: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        e, share = seg
        y = self.linear_local(x)
        mean = (x * (m / m.sum(-1, keepdim=True))).sum(-1, keepdim=True)
        context = mean + (x @ share) @ e.T
        return y * torch.sigmoid(self.linear2(F.relu(self.linear1(context))))


class DenseTdnnLayer(nn.Module):
    def __init__(self, cin: int, kernel: int, dilation: int) -> None:
        super().__init__()
        bn = BN_SIZE * GROWTH
        self.nonlinear1 = BnRelu(cin)
        self.linear1 = nn.Conv1d(cin, bn, 1, bias=False)
        self.nonlinear2 = BnRelu(bn)
        self.cam_layer = CamLayer(bn, GROWTH, kernel, dilation)

    def forward(
        self, x: torch.Tensor, m: torch.Tensor, seg: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        h = self.nonlinear2(self.linear1(self.nonlinear1(x))) * m
        return self.cam_layer(h, m, seg) * m


class DenseBlock(nn.Module):
    def __init__(self, layers: int, cin: int, kernel: int, dilation: int) -> None:
        super().__init__()
        for i in range(layers):
            self.add_module(
                f"tdnnd{i + 1}", DenseTdnnLayer(cin + i * GROWTH, kernel, dilation)
            )

    def forward(
        self, x: torch.Tensor, m: torch.Tensor, seg: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        for layer in self.children():
            x = torch.cat([x, layer(x, m, seg)], dim=1)
        return x


class Transit(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.nonlinear = BnRelu(cin)
        self.linear = nn.Conv1d(cin, cout, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.nonlinear(x))


class Dense(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.linear = nn.Conv1d(cin, cout, 1, bias=False)
        self.nonlinear = BnRelu(cout, affine=False, relu=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.nonlinear(self.linear(x.unsqueeze(-1))).squeeze(-1)


class XVector(nn.Module):
    def __init__(self, cin: int) -> None:
        super().__init__()
        self.tdnn = Tdnn(cin, INIT_CHANNELS)
        c = INIT_CHANNELS
        for i, (layers, kernel, dilation) in enumerate(BLOCKS):
            self.add_module(f"block{i + 1}", DenseBlock(layers, c, kernel, dilation))
            c += layers * GROWTH
            self.add_module(f"transit{i + 1}", Transit(c, c // 2))
            c //= 2
        self.out_nonlinear = BnRelu(c)
        self.dense = Dense(2 * c, EMBEDDING)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask[:, None, ::TDNN_STRIDE]
        x = self.tdnn(x) * m
        seg = segments(x.shape[-1], m)
        for i in range(len(BLOCKS)):
            x = getattr(self, f"block{i + 1}")(x, m, seg)
            x = getattr(self, f"transit{i + 1}")(x) * m
        x = self.out_nonlinear(x) * m
        # weighted means, not sums over frames (a sum of squares over 750
        # frames overflows fp16 on the HTP); no Pow(x, 2): wrong on HTP fp16
        n = m.sum(-1)
        w = m / n[..., None]
        mean = (x * w).sum(-1)
        d = (x - mean[..., None]) * m
        var = (d * d * w).sum(-1) * (n / (n - 1))
        return self.dense(torch.cat([mean, var.sqrt()], dim=-1))


class MaskedCampPlus(nn.Module):
    """``forward(fbank [1, frames, 80], mask [1, frames]) -> style [1, 192]``:
    upstream's ``CAMPPlus(feat_dim=80, embedding_size=192)`` on the mask's
    real frames (the clip's fbank, mean-subtracted over its real frames)."""

    def __init__(self) -> None:
        super().__init__()
        self.head = Head()
        self.xvector = XVector(HEAD_CHANNELS * (FEAT_DIM // 8))

    def forward(self, fbank: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.xvector(self.head(fbank.permute(0, 2, 1), mask), mask)
