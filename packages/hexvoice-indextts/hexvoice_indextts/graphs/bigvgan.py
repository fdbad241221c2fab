"""BigVGAN v2 (the vocoder IndexTTS-2 names, ``nvidia/bigvgan_v2_22khz_80band_256x``)
as a static graph per window of mel frames, from ``bigvgan_generator.pt``.

Upstream runs it on the segment's whole mel: its convolutions pad with zeros
and its anti-aliased activations (``Activation1d``: 2x up-sampling, SnakeBeta,
a low-pass back down) pad with *replication*, at the segment's ends. A window
that holds the segment's end, or a short segment padded into a window, must
do the same at the real end, not at the window's:

- before every convolution the frames past the end are zeroed (``mask``, at
  the output rate; each coarser rate takes every n-th of it);
- each activation's two resamplers read their input through a gather index
  (``edges``, written by the CPU, voice/frames.replicate_index) that repeats
  the last real sample past the end, as replication padding does there.

A window inside a longer segment has real neighbours instead; the windows'
overlap (at least the receptive radius, scripts/common/receptive_field.py)
hides its edges.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import torch
import torch.nn.functional as F
from torch import nn

from hexvoice_indextts.graphs.dit import weight_norm
from hexvoice_indextts.graphs.weights import Weights

INPUTS: Final = ("mel", "mask", "edges")
OUTPUT: Final = "audio"
#: Activation1d's defaults (alias_free_activation/torch/act.py): 2x up, 2x
#: down, kernels of 12
RATIO: Final = 2
RESAMPLE_KERNEL: Final = 12
#: SnakeBeta's no_div_by_zero
SNAKE_EPS: Final = 1e-9
#: The least window: measured on the x86 HTP simulator, conv_pre (kernel 7 over
#: 80 bands) alone is 1.2 dB from the CPU at 8 frames and 4 dB at 16, and
#: 68 dB at 20, 24 and 32 (the fp16 floor); the build refuses smaller windows.
MIN_WINDOW_FRAMES: Final = 20


@dataclass(frozen=True)
class Resampling:
    """UpSample1d / DownSample1d of Activation1d, with their paddings."""

    kernel: int = RESAMPLE_KERNEL
    ratio: int = RATIO

    @property
    def up_pad(self) -> int:  # replication each side, before the transposed conv
        return self.kernel // self.ratio - 1

    @property
    def up_crop(self) -> tuple[int, int]:
        left = self.up_pad * self.ratio + (self.kernel - self.ratio) // 2
        right = self.up_pad * self.ratio + (self.kernel - self.ratio + 1) // 2
        return left, right

    @property
    def down_pad(self) -> tuple[int, int]:  # LowPassFilter1d, even kernel
        return self.kernel // 2 - 1, self.kernel // 2

    def edge_lengths(self, samples: int) -> tuple[int, int]:
        """The gathered lengths at a rate of ``samples``: up, down."""
        (dl, dr) = self.down_pad
        return samples + 2 * self.up_pad, self.ratio * samples + dl + dr


class MaskedBigVGAN(nn.Module):
    """``forward(mel [1, 80, F], mask [1, F * hop], edges [E]) -> audio [1, 1,
    F * hop]``, clamped to [-1, 1] (``use_tanh_at_final`` false)."""

    def __init__(
        self, state: Mapping[str, torch.Tensor], h: Mapping[str, Any], frames: int
    ) -> None:
        super().__init__()
        if frames < MIN_WINDOW_FRAMES:
            raise ValueError(
                f"a BigVGAN window of {frames} frames: at least {MIN_WINDOW_FRAMES}"
            )
        if (
            h.get("resblock") != "1"
            or h.get("activation") != "snakebeta"
            or h.get("use_tanh_at_final", True)
        ):
            raise ValueError(
                "the port takes BigVGAN v2's AMPBlock1, snakebeta, no final tanh"
            )
        self.p = Weights(state)
        self.rates: Sequence[int] = h["upsample_rates"]
        self.up_kernels: Sequence[int] = h["upsample_kernel_sizes"]
        self.kernels: Sequence[int] = h["resblock_kernel_sizes"]
        self.dilations: Sequence[Sequence[int]] = h["resblock_dilation_sizes"]
        self.logscale = bool(h["snake_logscale"])
        self.frames, self.hop = frames, math.prod(self.rates)
        self.r = Resampling()

    def level_samples(self) -> list[int]:
        """Samples of the window at each rate that has activations."""
        out, n = [], self.frames
        for u in self.rates:
            n *= u
            out.append(n)
        return out

    def edges_length(self) -> int:
        return sum(sum(self.r.edge_lengths(n)) for n in self.level_samples())

    def _conv(self, x: torch.Tensor, name: str, dilation: int = 1) -> torch.Tensor:
        w = weight_norm(self.p.w(f"{name}.weight_g"), self.p.w(f"{name}.weight_v"))
        b = self.p.w(f"{name}.bias") if self.p.has(f"{name}.bias") else None
        return F.conv1d(
            x, w, b, padding=dilation * (w.shape[-1] - 1) // 2, dilation=dilation
        )

    def _snake(self, x: torch.Tensor, name: str) -> torch.Tensor:
        alpha, beta = (
            self.p.w(f"{name}.alpha")[None, :, None],
            self.p.w(f"{name}.beta")[None, :, None],
        )
        if self.logscale:
            alpha, beta = torch.exp(alpha), torch.exp(beta)
        s = torch.sin(x * alpha)  # squared as s * s: Pow(x, 2) is wrong on HTP fp16
        return x + (1.0 / (beta + SNAKE_EPS)) * (s * s)

    def _activation(
        self,
        x: torch.Tensor,
        prefix: str,
        up_idx: torch.Tensor,
        down_idx: torch.Tensor,
    ) -> torch.Tensor:
        """Activation1d at ``prefix``: its own filters from the checkpoint
        (Kaiser-windowed sincs, stored as buffers), SnakeBeta between.
        Every channel takes the same filter, so the channels become the batch
        of a one-channel convolution (the QNN EP refuses upstream's grouped,
        strided form, groups=C): the same sums."""
        _, c, _ = x.shape
        up = self.p.w(f"{prefix}.upsample.filter")  # [1, 1, kernel]
        down = self.p.w(f"{prefix}.downsample.lowpass.filter")
        x = x.index_select(2, up_idx).reshape(c, 1, -1)  # replication at both ends
        x = RATIO * F.conv_transpose1d(x, up, stride=RATIO)
        left, right = self.r.up_crop
        x = self._snake(x[..., left:-right].reshape(1, c, -1), f"{prefix}.act")
        x = x.index_select(2, down_idx).reshape(c, 1, -1)
        return F.conv1d(x, down, stride=RATIO).reshape(1, c, -1)

    def forward(
        self, mel: torch.Tensor, mask: torch.Tensor, edges: torch.Tensor
    ) -> torch.Tensor:
        x = self._conv(mel, "conv_pre")
        offset, n = 0, self.frames
        for i, (u, k) in enumerate(zip(self.rates, self.up_kernels, strict=True)):
            x = x * mask[:, None, :: self.hop * self.frames // n]
            name = f"ups.{i}.0"
            w = weight_norm(self.p.w(f"{name}.weight_g"), self.p.w(f"{name}.weight_v"))
            x = F.conv_transpose1d(
                x, w, self.p.w(f"{name}.bias"), stride=u, padding=(k - u) // 2
            )
            n *= u
            m = mask[:, None, :: self.hop * self.frames // n]
            lu, ld = self.r.edge_lengths(n)
            up_idx, down_idx = (
                edges[offset : offset + lu],
                edges[offset + lu : offset + lu + ld],
            )
            offset += lu + ld
            xs = None
            # each resblock's kernel is its weights' width
            for j, dils in enumerate(self.dilations):
                b = f"resblocks.{i * len(self.kernels) + j}"
                y = x
                for d_i, d in enumerate(dils):
                    t = (
                        self._activation(
                            y, f"{b}.activations.{2 * d_i}", up_idx, down_idx
                        )
                        * m
                    )
                    t = self._conv(t, f"{b}.convs1.{d_i}", d)
                    t = (
                        self._activation(
                            t, f"{b}.activations.{2 * d_i + 1}", up_idx, down_idx
                        )
                        * m
                    )
                    y = self._conv(t, f"{b}.convs2.{d_i}") + y
                xs = y if xs is None else xs + y
            x = xs / len(self.kernels)
        x = self._activation(x, "activation_post", up_idx, down_idx) * mask[:, None]
        return torch.clamp(self._conv(x, "conv_post"), -1.0, 1.0)
