"""The emotion vector's CPU arithmetic, as ``infer_v2.infer_generator`` does
it around the ``emotion_vector`` graph (graphs/gpt_conditioning.py):

- ``merge``: ``UnifiedVoice.merge_emovec``: base (the speaker clip's vector)
  + alpha * (emotion clip's - base); without an emotion clip upstream takes
  the speaker clip again and alpha 1;
- eight emotion weights: each scaled by ``clamp(emo_alpha, 0, 1)`` and, when
  that is not 1, truncated to 4 decimals (``int(x * s * 10000) / 10000``);
  per emotion, the row of ``feat2.pt`` whose ``feat1.pt`` twin is most like
  the voice's style (cosine, the first on a tie), weighted and summed, plus
  ``(1 - sum(weights))`` times the merged vector.

All in float32, as upstream's torch computes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

#: torch.nn.functional.cosine_similarity's eps
COSINE_EPS: Final = 1e-8
#: infer_v2's truncation of scaled weights to 4 decimals
DECIMALS: Final = 10000


def merge(base: np.ndarray, emo: np.ndarray, alpha: float) -> np.ndarray:
    b, e = np.float32(base), np.asarray(emo, np.float32)
    return b + np.float32(alpha) * (e - b)


def scaled_weights(weights: Sequence[float], emo_alpha: float) -> list[float]:
    scale = max(0.0, min(1.0, emo_alpha))
    if scale == 1.0:
        return list(weights)
    return [int(w * scale * DECIMALS) / DECIMALS for w in weights]


def split(matrix: np.ndarray, counts: Sequence[int]) -> list[np.ndarray]:
    """``torch.split(matrix, emo_num)``: one block of rows per emotion."""
    return np.split(np.asarray(matrix), np.cumsum(counts)[:-1])


def most_similar(style: np.ndarray, rows: np.ndarray) -> int:
    """upstream's find_most_similar_cosine (float64 here)."""
    s, r = np.asarray(style, np.float64).reshape(-1), np.asarray(rows, np.float64)
    norms = np.maximum(np.linalg.norm(r, axis=1) * np.linalg.norm(s), COSINE_EPS)
    return int(np.argmax(r @ s / norms))


def with_weights(
    merged: np.ndarray,
    weights: Sequence[float],
    style: np.ndarray,
    spk_blocks: Sequence[np.ndarray],
    emo_blocks: Sequence[np.ndarray],
) -> np.ndarray:
    """The vector of eight weights: matrix rows chosen by the style, weighted,
    plus the rest of the merged vector."""
    w = np.asarray(weights, np.float32)
    rows = np.stack(
        [
            emo[most_similar(style, spk)]
            for spk, emo in zip(spk_blocks, emo_blocks, strict=True)
        ]
    ).astype(np.float32)
    mat = (w[:, None] * rows).sum(axis=0, dtype=np.float32)[None]
    return mat + (np.float32(1) - w.sum(dtype=np.float32)) * np.asarray(
        merged, np.float32
    )
