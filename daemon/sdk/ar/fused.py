"""Repetition penalty, argmax, temperature, top-k and softmax in one pass each.

The decode loop samples after every graph step, with caches cold from the
graph; this numba kernel does the common chain (no top-p) without temporaries.
It performs the same float32 operations as ``processors.RepetitionPenalty`` +
``Temperature`` + ``TopK`` + ``softmax``, so both give the same candidates
(tests/daemon/sdk/ar/test_sampler.py holds them equal).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(nogil=True)
def penalise_top_k(
    x: np.ndarray,
    ids: np.ndarray,
    penalty: np.float32,
    temperature: np.float32,
    top: np.ndarray,
    cand: np.ndarray,
    probs: np.ndarray,
) -> tuple[int, int]:
    """Penalise ``x`` at ``ids`` in place; keep the ``top.size`` best of
    ``x / temperature`` (ties with the k-th kept) and softmax them.

    Returns (penalised argmax, number of candidates) and fills ``cand`` /
    ``probs`` with the surviving token ids (ascending) and their probabilities.
    """
    for i in ids:
        s = x[i]
        x[i] = s * penalty if s < 0 else s / penalty
    best = 0
    for i in range(1, x.size):
        if x[i] > x[best]:
            best = i
    k = top.size
    top[:] = -np.inf
    for i in range(x.size):
        t = x[i] / temperature
        if t > top[k - 1]:  # k-th largest with multiplicity, like torch.topk
            j = k - 1
            while j > 0 and top[j - 1] < t:
                top[j] = top[j - 1]
                j -= 1
            top[j] = t
    pivot, high = top[k - 1], top[0]
    n = 0
    total = np.float32(0.0)
    for i in range(x.size):
        t = x[i] / temperature
        if t >= pivot:  # ties with the k-th value are kept
            e = np.exp(t - high)
            cand[n] = i
            probs[n] = e
            total += e
            n += 1
    for j in range(n):
        probs[j] /= total
    return best, n
