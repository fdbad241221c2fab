"""Parity metrics shared by every gate, oracle and test (one definition each).

Every metric takes ``(reference, test)`` in that order: ``reference`` is the
trusted output (CPU/torch/ONNX), ``test`` the output under judgement (the
compiled graph, the simulator, the runtime). Pass them by keyword where the
call site does not make the roles obvious: ``rel_error(reference=want,
test=got)``.

- ``snr_db``: 10 log10(|reference|² / |reference − test|²) in dB.
- ``rel_error``: ||test − reference|| / ||reference||, so the denominator is
  the reference's norm and the metric is not symmetric.
- ``cosine``: cosine similarity of the flattened arrays (symmetric; its
  parameters are named the same way for one calling convention).
"""

from __future__ import annotations

import numpy as np

#: keeps the ratios finite for an all-zero reference
_TINY = 1e-30


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """10 log10(|reference|² / |reference − test|²) in dB; shapes must match."""
    if reference.shape != test.shape:
        raise ValueError(f"shape mismatch: {reference.shape} vs {test.shape}")
    ref = np.asarray(reference, np.float64)
    err = float(np.sum((ref - test) ** 2))
    return float("inf") if err == 0.0 else float(10.0 * np.log10(np.sum(ref**2) / err))


def rel_error(reference: np.ndarray, test: np.ndarray) -> float:
    """||test − reference|| / ||reference|| (L2 over all elements)."""
    return float(
        np.linalg.norm(test - reference) / max(np.linalg.norm(reference), _TINY)
    )


def cosine(reference: np.ndarray, test: np.ndarray) -> float:
    """Cosine similarity of the flattened arrays (symmetric)."""
    a = np.ravel(reference).astype(np.float64)
    b = np.ravel(test).astype(np.float64)
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), _TINY))
