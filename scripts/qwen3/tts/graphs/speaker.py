"""The Base checkpoint's speaker encoder as one static graph per mel bucket,
speaker_<F> (upstream `Qwen3TTSSpeakerEncoder`, ECAPA-TDNN, docs/qwen3.md, TTS
components; x-vector mel).

    mel f32 [1,F,128]      upstream `mel_spectrogram` of the clip, transposed as
                           `extract_speaker_embedding` feeds it; n <= F frames,
                           the rest anything finite (the runtime sends zeros)
    valid f32 [1,F]        1 for the clip's n frames, 0 after
    reflect int32 [F+2P]   frame t - P -> the frame upstream's 'same' reflect
                           padding reads there for an n-frame input
                           (daemon/engines/qwen3/tts/xvector.py reflect_index)
    → xvec f32 [1,D]

So one graph gives upstream's x-vector of every clip of 1 + P .. F frames (P:
`reflect_pad`, the widest conv's padding; torch's reflect padding needs more
frames than it pads).  Upstream runs each clip at its own length; here:

- a conv with kernel k > 1 and dilation d (padding 'same', reflect) takes its
  input gathered by `reflect` (the central F + d(k-1) entries) and pads
  nothing, so every valid output frame reads exactly the frames upstream's
  reads, the reflected ones at the clip's true end included; frames after n
  hold garbage that no valid frame reads;
- the time means (the squeeze-excitation's, the pooling's first statistics)
  weigh frames by valid / n, upstream's mask / total; the attention's padded
  frames get MASKED_LOGIT before the softmax (upstream's -inf fill), so their
  weights are 0;
- kernel-1 convs mix no frames and run as they are.

The variance squares as d·d, the form the HTP computes right (docs/qwen3.md,
export findings).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scripts.common.build.onnx_export import export_static

INPUTS = ("mel", "valid", "reflect")
OUTPUTS = ("xvec",)
#: the attention logit of a padded frame: exp of it against any real logit is
#: 0 in fp32 and fp16 alike, and it is well inside fp16's range (65504)
MASKED_LOGIT: Final = -1.0e4


def encoder_of(model: Any) -> nn.Module:
    """The speaker encoder of a Base top model (or the encoder itself)."""
    encoder = getattr(model, "speaker_encoder", model)
    if encoder is None:
        raise ValueError("the model has no speaker encoder (not a Base checkpoint)")
    return encoder


def _pad_of(conv: nn.Conv1d) -> int:
    """The 'same' padding of one side (odd kernels: ECAPA's are 1, 3 and 5)."""
    k, d = conv.kernel_size[0], conv.dilation[0]
    if k % 2 == 0:
        raise ValueError(f"{conv}: an even kernel pads unevenly; not supported")
    if k > 1 and conv.padding_mode != "reflect":
        raise ValueError(f"{conv}: expected reflect padding (upstream ECAPA)")
    return d * (k - 1) // 2


def reflect_pad(model: Any) -> int:
    """P: the widest padding of the encoder's convs (4 for upstream's kernel 3,
    dilation 4); the ``reflect`` input has F + 2P entries."""
    return max(
        _pad_of(c) for c in encoder_of(model).modules() if isinstance(c, nn.Conv1d)
    )


class Frames(NamedTuple):
    """What every time-mixing layer of one call needs."""

    reflect: Tensor  # int32 [F + 2P]
    pad: int  # P
    mask: Tensor  # [1, 1, F]: 1 valid, 0 padded
    weights: Tensor  # [1, 1, F]: valid / n


def _conv(conv: nn.Conv1d, x: Tensor, t: Frames) -> Tensor:
    p = _pad_of(conv)
    if p == 0:
        return conv(x)
    frames = x.shape[-1]
    index = t.reflect[t.pad - p : t.pad + frames + p]
    return F.conv1d(
        x.index_select(2, index), conv.weight, conv.bias, dilation=conv.dilation
    )


def _tdnn(block: nn.Module, x: Tensor, t: Frames) -> Tensor:
    """Upstream TimeDelayNetBlock: relu(conv(x))."""
    return block.activation(_conv(block.conv, x, t))


def _res2net(block: nn.Module, x: Tensor, t: Frames) -> Tensor:
    """Upstream Res2NetBlock.forward with masked convs."""
    outs: list[Tensor] = []
    for i, part in enumerate(torch.chunk(x, block.scale, dim=1)):
        if i == 0:
            out = part
        elif i == 1:
            out = _tdnn(block.blocks[0], part, t)
        else:
            out = _tdnn(block.blocks[i - 1], part + out, t)
        outs.append(out)
    return torch.cat(outs, dim=1)


def _squeeze_excite(block: nn.Module, x: Tensor, t: Frames) -> Tensor:
    """Upstream SqueezeExcitationBlock; its time mean over the valid frames."""
    s = (x * t.weights).sum(2, keepdim=True)
    s = block.sigmoid(block.conv2(block.relu(block.conv1(s))))
    return x * s


def _se_res2net(block: nn.Module, x: Tensor, t: Frames) -> Tensor:
    """Upstream SqueezeExcitationRes2NetBlock.forward."""
    h = _tdnn(block.tdnn1, x, t)
    h = _tdnn(block.tdnn2, _res2net(block.res2net_block, h, t), t)
    return _squeeze_excite(block.se_block, h, t) + x


def _stats(x: Tensor, weights: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """Upstream `_compute_statistics`: weighted mean and std over time."""
    mean = (weights * x).sum(2)
    d = x - mean.unsqueeze(2)
    return mean, torch.sqrt((weights * (d * d)).sum(2).clamp(eps))


def _pool(asp: nn.Module, x: Tensor, t: Frames) -> Tensor:
    """Upstream AttentiveStatisticsPooling over the valid frames."""
    x = x * t.mask  # padded frames' garbage never meets a weight
    mean, std = _stats(x, t.weights, asp.eps)
    context = [x, mean.unsqueeze(2).expand_as(x), std.unsqueeze(2).expand_as(x)]
    attention = asp.conv(asp.tanh(_tdnn(asp.tdnn, torch.cat(context, dim=1), t)))
    attention = attention * t.mask + (1.0 - t.mask) * MASKED_LOGIT
    mean, std = _stats(x, torch.softmax(attention, dim=2), asp.eps)
    return torch.cat((mean, std), dim=1).unsqueeze(2)


class SpeakerEncoder(nn.Module):
    """speaker_<F>: (mel, valid, reflect) → xvec [1,D] (upstream forward)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        enc = encoder_of(model)
        self.blocks, self.mfa, self.asp, self.fc = enc.blocks, enc.mfa, enc.asp, enc.fc
        self.pad = reflect_pad(enc)

    def forward(self, mel: Tensor, valid: Tensor, reflect: Tensor) -> Tensor:
        mask = valid.unsqueeze(1)
        t = Frames(reflect, self.pad, mask, mask / mask.sum(2, keepdim=True))
        h, outs = mel.transpose(1, 2), []
        for i, block in enumerate(self.blocks):
            h = _tdnn(block, h, t) if i == 0 else _se_res2net(block, h, t)
            outs.append(h)
        h = _tdnn(self.mfa, torch.cat(outs[1:], dim=1), t)
        return self.fc(_pool(self.asp, h, t)).squeeze(-1)


def speaker_args(model: Any, frames: int) -> tuple[Tensor, Tensor, Tensor]:
    """Export arguments: a full bucket (any valid length traces the same)."""
    mels = encoder_of(model).blocks[0].conv.in_channels
    pad = reflect_pad(model)
    reflect = torch.arange(-pad, frames + pad).abs()
    reflect = torch.where(reflect > frames - 1, 2 * (frames - 1) - reflect, reflect)
    return (
        torch.zeros(1, frames, mels),
        torch.ones(1, frames),
        reflect.to(torch.int32),
    )


def export_speaker(model: Any, frames: int, path: str | Path) -> Path:
    """speaker_<frames> at `path` (I/O: module docstring)."""
    export_static(
        SpeakerEncoder(model), speaker_args(model, frames), INPUTS, OUTPUTS, path
    )
    return Path(path)
