"""The int16 samples infer_v2 returns: ``(wav * 32767).clamp(-32767,
32767).to(torch.int16)``, float32 then truncation toward zero (BigVGAN's
output is already clamped to [-1, 1])."""

from __future__ import annotations

from typing import Final

import numpy as np

#: infer_v2's full scale (not 32768: -32768 never occurs)
FULL_SCALE: Final = np.float32(32767)


def to_int16(audio: np.ndarray) -> np.ndarray:
    scaled = np.asarray(audio, np.float32) * FULL_SCALE
    return np.clip(scaled, -FULL_SCALE, FULL_SCALE).astype(np.int16)
