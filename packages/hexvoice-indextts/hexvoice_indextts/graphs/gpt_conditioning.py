"""The GPT's two per-voice conditionings as static graphs per row bucket,
from ``gpt.pth``:

- ``speaker_latents``: ``UnifiedVoice.get_conditioning`` (conformer_perceiver):
  the condition encoder and its perceiver, 32 latents of the GPT's width, from
  ``spk_cond_emb``;
- ``emotion_vector``: ``UnifiedVoice.get_emovec``: the emotion encoder, its
  one-latent perceiver (1024 wide), ``emovec_layer`` and ``emo_layer``, from an
  emotion clip's ``emo_cond_emb`` (the speaker clip's too: ``merge_emovec``
  mixes the two on the CPU, voice/emotion.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import torch
import torch.nn.functional as F
from torch import nn

from hexvoice_indextts.graphs.conformer import MaskedConformer
from hexvoice_indextts.graphs.perceiver import MaskedPerceiver
from hexvoice_indextts.graphs.weights import sub
from hexvoice_indextts.model_dir.config import Gpt

INPUTS: Final = ("cond", "mask")


def gpt_state(checkpoint: Path) -> dict[str, torch.Tensor]:
    """gpt.pth: UnifiedVoice's state dict, plain or under "model" (upstream's
    utils/checkpoint.load_checkpoint takes both)."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    return state.get("model", state) if isinstance(state, dict) else state


class SpeakerLatents(nn.Module):
    """``forward(cond [1, R, 1024], mask [1, R]) -> latents [1, 32, model_dim]``."""

    def __init__(self, state: Mapping[str, Any], cfg: Gpt) -> None:
        super().__init__()
        assert cfg.condition_module is not None  # read_model_dir checks it
        self.encoder = MaskedConformer(
            sub(state, "conditioning_encoder."), cfg.condition_module
        )
        heads = cfg.condition_module.attention_heads
        self.perceiver = MaskedPerceiver(sub(state, "perceiver_encoder."), heads)

    def forward(self, cond: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.perceiver(*self.encoder(cond, mask))


class EmotionVector(nn.Module):
    """``forward(cond [1, R, 1024], mask [1, R]) -> emo_vec [1, model_dim]``."""

    def __init__(self, state: Mapping[str, Any], cfg: Gpt) -> None:
        super().__init__()
        assert cfg.emo_condition_module is not None
        self.encoder = MaskedConformer(
            sub(state, "emo_conditioning_encoder."), cfg.emo_condition_module
        )
        heads = cfg.emo_condition_module.attention_heads
        self.perceiver = MaskedPerceiver(sub(state, "emo_perceiver_encoder."), heads)
        for name in ("emovec_layer", "emo_layer"):
            for part in ("weight", "bias"):
                self.register_buffer(f"{name}_{part}", state[f"{name}.{part}"].clone())

    def forward(self, cond: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        v = self.perceiver(*self.encoder(cond, mask))[:, 0]
        v = F.linear(v, self.emovec_layer_weight, self.emovec_layer_bias)
        return F.linear(v, self.emo_layer_weight, self.emo_layer_bias)
