"""The Base checkpoint's speaker encoder as one static graph per mel length,
speaker_<F> (upstream `Qwen3TTSSpeakerEncoder`, ECAPA-TDNN, qwen3.md §2.1, §2.5).

mel f32 [1,F,128] (upstream `mel_spectrogram` transposed, as
`extract_speaker_embedding` feeds it) → xvec f32 [1,D].

Upstream's TDNN, SE-Res2Net and MFA blocks run as they are (their 'same' reflect
padding is static). The attentive statistics pooling is re-written: upstream
builds an all-ones length mask at run time (batch 1, no padding) and squares with
`pow(2)`; here the mask is gone (its weights are 1/F) and the variance squares as
d·d, the form the HTP computes right (qwen3.md §5). ECAPA's reflect padding and
pooling see the whole clip, so padding a mel is not exact: the engine trims to a
bucket instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from scripts.qwen3.graph_export import export_static

INPUTS = ("mel",)
OUTPUTS = ("xvec",)


def encoder_of(model: Any) -> nn.Module:
    """The speaker encoder of a Base top model (or the encoder itself)."""
    encoder = getattr(model, "speaker_encoder", model)
    if encoder is None:
        raise ValueError("the model has no speaker encoder (not a Base checkpoint)")
    return encoder


def _stats(x: Tensor, weights: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """Upstream `_compute_statistics`: weighted mean and std over time."""
    mean = (weights * x).sum(2)
    d = x - mean.unsqueeze(2)
    return mean, torch.sqrt((weights * (d * d)).sum(2).clamp(eps))


class Pooling(nn.Module):
    """Upstream AttentiveStatisticsPooling for one unpadded clip."""

    def __init__(self, asp: nn.Module) -> None:
        super().__init__()
        self.tdnn, self.tanh, self.conv, self.eps = (
            asp.tdnn,
            asp.tanh,
            asp.conv,
            asp.eps,
        )

    def forward(self, x: Tensor) -> Tensor:
        frames = x.shape[-1]
        mean, std = _stats(x, torch.full_like(x[:, :1], 1.0 / frames), self.eps)
        context = [x, mean.unsqueeze(2).expand_as(x), std.unsqueeze(2).expand_as(x)]
        attention = self.conv(self.tanh(self.tdnn(torch.cat(context, dim=1))))
        mean, std = _stats(x, torch.softmax(attention, dim=2), self.eps)
        return torch.cat((mean, std), dim=1).unsqueeze(2)


class SpeakerEncoder(nn.Module):
    """speaker_<F>: mel [1,F,128] → xvec [1,D] (upstream forward, Pooling)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        enc = encoder_of(model)
        self.blocks, self.mfa, self.fc = enc.blocks, enc.mfa, enc.fc
        self.pool = Pooling(enc.asp)

    def forward(self, mel: Tensor) -> Tensor:
        h, outs = mel.transpose(1, 2), []
        for block in self.blocks:
            h = block(h)
            outs.append(h)
        h = self.mfa(torch.cat(outs[1:], dim=1))
        return self.fc(self.pool(h)).squeeze(-1)


def mel_args(model: Any, frames: int) -> tuple[Tensor]:
    mels = encoder_of(model).blocks[0].conv.in_channels
    return (torch.zeros(1, frames, mels),)


def export_speaker(model: Any, frames: int, path: str | Path) -> Path:
    """speaker_<frames> at `path` (I/O: module docstring)."""
    export_static(SpeakerEncoder(model), mel_args(model, frames), INPUTS, OUTPUTS, path)
    return Path(path)
