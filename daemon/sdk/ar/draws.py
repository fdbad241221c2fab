"""Randomness of one request, and the two ways a token is chosen.

Every random number a request uses comes from its own ``np.random.Generator``
(``request_rng(seed)``), drawn in a fixed order, so a seeded request gives the
same tokens and audio every time and concurrent requests never share a stream.
"""

from __future__ import annotations

from typing import Final

import numpy as np

_TINY: Final = np.finfo(np.float64).tiny


def request_rng(seed: int | None) -> np.random.Generator:
    """The generator of one request (``None``: fresh OS entropy)."""
    return np.random.default_rng(seed)


def greedy(x: np.ndarray) -> int:
    """The first index of the largest score."""
    return int(np.argmax(x))


def race(probs: np.ndarray, q: np.ndarray) -> int:
    """The exponential race: ``argmax(probs / q)`` for ``q ~ Exp(1)``, an exact
    categorical draw (GPT-SoVITS ``multinomial_sample_one_no_sync``).

    ``q`` is float64 and floored at the smallest normal number: a zero draw
    would turn a removed token's ``0 / 0`` into a NaN, which argmax picks.
    """
    return int(np.argmax(probs / np.maximum(q, _TINY)))


def sample(cand: np.ndarray, probs: np.ndarray, rng: np.random.Generator) -> int:
    """One token of ``cand`` with probabilities ``probs``; one Exp(1) draw per
    candidate (ids outside ``cand`` have probability 0 and cannot win)."""
    return int(cand[race(probs, rng.standard_exponential(len(cand)))])
