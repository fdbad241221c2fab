"""s2mel's length regulator (``InterpolateRegulator``) as a static graph per
mel-frame bucket, with a frame mask: the prompt's condition (per voice, from
``S_ref``) and the target's (per utterance, from the GPT's codes and latent).

Upstream: ``content_in_proj`` (a Linear to ``channels``), nearest
interpolation from the rows to ``ylens`` mel frames, then per sampling ratio
a centred 3-tap convolution, ``GroupNorm(1, channels)`` and Mish, and a 1x1
convolution.  The interpolation only picks rows (voice/frames.py
``nearest_rows``, as torch picks them), so the CPU gathers them before the
graph and the projection runs on the gathered rows (it is per row).  In the
graph, every block is masked past the real frames, and the group norm, whose
statistics span all channels and all frames, takes them over real frames only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import torch
import torch.nn.functional as F
from torch import nn

from hexvoice_indextts.graphs.weights import sub
from hexvoice_indextts.model_dir.config import LengthRegulator

#: nn.GroupNorm's default eps; the regulator's convolution kernel
GROUP_NORM_EPS: Final = 1e-5
KERNEL: Final = 3


class MaskedLengthRegulator(nn.Module):
    """``forward(rows [1, F, in_channels], mask [1, F]) -> condition [1, F, channels]``
    for rows already picked by ``nearest_rows``."""

    def __init__(self, state: Mapping[str, torch.Tensor], cfg: LengthRegulator) -> None:
        super().__init__()
        unported = {
            "is_discrete": cfg.is_discrete,
            "vector_quantize": cfg.vector_quantize,
            "f0_condition": cfg.f0_condition,
        }
        if any(unported.values()) or not cfg.sampling_ratios:
            raise ValueError(
                f"s2mel.length_regulator: {unported}, sampling_ratios "
                f"{cfg.sampling_ratios}: the port takes IndexTTS-2's continuous "
                "input, no quantizer, no f0, and at least one block"
            )
        self.blocks = len(cfg.sampling_ratios)
        self.in_proj = nn.Linear(cfg.in_channels, cfg.channels)
        self.convs = nn.ModuleList(
            nn.Conv1d(cfg.channels, cfg.channels, KERNEL, padding=KERNEL // 2)
            for _ in range(self.blocks)
        )
        self.norms = nn.ModuleList(
            nn.GroupNorm(1, cfg.channels) for _ in range(self.blocks)
        )
        self.out = nn.Conv1d(cfg.channels, cfg.channels, 1)
        # upstream's Sequential: [conv, norm, mish] per block, then the 1x1 conv
        self.in_proj.load_state_dict(sub(state, "content_in_proj."))
        for i in range(self.blocks):
            self.convs[i].load_state_dict(sub(state, f"model.{3 * i}."))
            self.norms[i].load_state_dict(sub(state, f"model.{3 * i + 1}."))
        self.out.load_state_dict(sub(state, f"model.{3 * self.blocks}."))

    def forward(self, rows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask[:, None, :]
        h = self.in_proj(rows).transpose(1, 2) * m
        count = m.sum() * h.shape[1]
        for conv, norm in zip(self.convs, self.norms, strict=True):
            h = conv(h) * m
            mean = h.sum() / count
            d = (h - mean) * m
            var = (d * d).sum() / count
            h = (
                d / torch.sqrt(var + GROUP_NORM_EPS) * norm.weight[:, None]
                + norm.bias[:, None]
            )
            h = F.mish(h) * m
        return (self.out(h) * m).transpose(1, 2)
