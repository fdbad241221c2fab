"""``build-gptsovits --hubert DIR``: a reference's prompt semantic tokens exactly as
upstream's TTS._set_prompt_semantic (docs/gpt-sovits.md, reference audio):
librosa.load(clip, sr=16000), + int(32000 * 0.3) zeros, chinese-hubert-base
(transformers HubertModel, called directly as TTS.py does), ssl_proj, nearest
codebook entry. Runs the torch models on the unpadded clip, so the tokens are
upstream's by construction (the graphs are gated against the same function).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from daemon.engines.gptsovits.reference.params import (
    HUBERT_RATE,
    MAX_REF_SECONDS,
    MIN_REF_SECONDS,
    PROMPT_ZEROS,
)
from scripts.gptsovits.models.hubert import reference_tokens

if TYPE_CHECKING:
    from transformers import HubertModel

    from scripts.gptsovits.models.sovits import SovitsModel

# TTS._set_prompt_semantic: reference 3..10 s, checked on the 16 kHz copy.
MIN_REF_SAMPLES = int(MIN_REF_SECONDS * HUBERT_RATE)
MAX_REF_SAMPLES = int(MAX_REF_SECONDS * HUBERT_RATE)


class ReferenceLengthError(ValueError):
    """The 16 kHz reference is outside upstream's 3..10 s."""


def hubert_clip(path: Path) -> np.ndarray:
    """The clip as upstream's _set_prompt_semantic reads it: librosa.load(path,
    sr=16000) (mono mix, soxr_hq resampling), no peak limiting."""
    import librosa

    audio, _ = librosa.load(str(path), sr=HUBERT_RATE)
    return np.asarray(audio, np.float32)


def hubert_prompt(path: Path, hubert: HubertModel, sovits: SovitsModel) -> np.ndarray:
    """Upstream's prompt tokens (int32) of the clip at ``path``."""
    wav16k = hubert_clip(path)
    if not MIN_REF_SAMPLES <= len(wav16k) <= MAX_REF_SAMPLES:
        raise ReferenceLengthError(
            f"reference {path.name}: {len(wav16k) / HUBERT_RATE:.2f} s at 16 kHz is "
            f"outside {MIN_REF_SECONDS:g}-{MAX_REF_SECONDS:g} s"
        )
    wav = np.concatenate([wav16k, np.zeros(PROMPT_ZEROS, np.float32)])
    return (
        reference_tokens(hubert, sovits, torch.from_numpy(wav)).numpy().astype(np.int32)
    )
