"""A training clip resynthesised by one SoVITS epoch from its own tokens.

Upstream SynthesizerTrn.decode with the clip as its own reference (ge, ge512
from its linear spectrogram and 7-sv_cn embedding), noise_scale 0.5 and a
fixed noise seed per clip, so every epoch decodes the same noise. It runs the
modules the build-time CPU parity gates run (scripts/gptsovits/verify/cpu.py):
SovitsModel.global_embedding, latent, phone_embedding, VitsEnc.upstream (the
vits_enc gate's reference: enc_p + reverse flow at exact lengths, speed 1) and
the full-length generator ``model.dec`` (the vits_gen gate's reference).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from scripts.gptsovits.evaluate.clips import TrainingClip
from scripts.gptsovits.models.sovits import SovitsModel, VitsEnc
from scripts.gptsovits.pipeline.refs import linear_spectrogram
from scripts.gptsovits.shapes import NOISE_SCALE


def check_clips(model: SovitsModel, clips: Sequence[TrainingClip]) -> None:
    """ValueError when a clip's tokens or sv embedding do not fit the model."""
    d = model.dims
    for clip in clips:
        if int(clip.tokens.max()) >= d.codebook:
            raise ValueError(
                f"clip {clip.name}: semantic token {int(clip.tokens.max())} is "
                f"outside the model's {d.codebook}-entry codebook"
            )
        if clip.sv.shape[1] != d.sv:
            raise ValueError(
                f"clip {clip.name}: 7-sv_cn embedding width {clip.sv.shape[1]}, "
                f"the model expects {d.sv}"
            )
        if int(clip.phones.max()) >= d.phone_vocab:
            raise ValueError(
                f"clip {clip.name}: phone id {int(clip.phones.max())} is outside "
                f"the model's {d.phone_vocab} phones"
            )


@torch.no_grad()
def resynthesise(model: SovitsModel, clip: TrainingClip, seed: int) -> np.ndarray:
    """float32 [2 * tokens * hop] audio of `clip` decoded by `model`."""
    ge, ge512 = model.global_embedding(linear_spectrogram(clip.audio), clip.sv)
    ssl = model.latent(torch.from_numpy(clip.tokens))
    text = model.phone_embedding(torch.from_numpy(clip.phones))
    frames = ssl.shape[-1]
    g = torch.Generator().manual_seed(seed)
    noise = torch.randn(1, model.dims.inter, frames, generator=g) * NOISE_SCALE
    z = VitsEnc(model).upstream(ssl, text, ge512, ge, noise)  # speed 1
    audio = model.dec(z, ge, torch.ones(1, 1, frames))
    return audio[0, 0].numpy().astype(np.float32)
