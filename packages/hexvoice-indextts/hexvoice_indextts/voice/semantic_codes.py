"""The semantic codes of a clip and their embeddings (upstream's ``S_ref``),
on the CPU from the ``semantic_codec`` graph's normalised latents: upstream's
``FactorizedVectorQuantize.decode_latents`` (euclidean distance to the
L2-normalised codebook, the least one's index) and ``out_project`` of that
code's raw embedding, in float64.  Tables: the codebook [K, d] and
out_project's weight [hidden, d] and bias [hidden], from the codec's state
dict (weight norm applied)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from hexvoice_indextts.voice.frames import padded

#: torch.nn.functional.normalize's eps (the codebook's L2 normalisation)
NORMALIZE_EPS: Final = 1e-12


@dataclass(frozen=True)
class Codebook:
    codebook: np.ndarray
    out_weight: np.ndarray
    out_bias: np.ndarray

    def scores(self, latents: np.ndarray) -> np.ndarray:
        """float64 [n, K]: minus each normalised latent row's euclidean
        distance to every normalised code, as upstream computes it."""
        e = np.asarray(latents, np.float64)
        c = self.codebook.astype(np.float64)
        c = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), NORMALIZE_EPS)
        return -((e * e).sum(1, keepdims=True) - 2 * e @ c.T + (c * c).sum(1)[None, :])

    def codes(self, latents: np.ndarray) -> np.ndarray:
        """int64 [n]: each row's code, the nearest (upstream's first on a tie)."""
        return np.argmax(self.scores(latents), axis=1)

    def embed(self, codes: np.ndarray) -> np.ndarray:
        """float32 [n, hidden]: out_project of the codes' raw embeddings."""
        raw = self.codebook.astype(np.float64)[codes]
        out = raw @ self.out_weight.astype(np.float64).T + self.out_bias
        return out.astype(np.float32)


def codec_inputs(hidden: np.ndarray, rows: int) -> dict[str, np.ndarray]:
    """The semantic codec graph's inputs: ``hidden`` [n, width] in a bucket of
    ``rows`` (every one of the n rows real, zeros and mask 0 after)."""
    h, m = padded(hidden, rows, what="codec rows")
    return {"hidden": h, "mask": m}
