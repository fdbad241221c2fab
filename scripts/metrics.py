"""Parity metrics shared by every gate, oracle and test (one definition each)."""

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


def rel_error(test: np.ndarray, ref: np.ndarray) -> float:
    """||test − ref|| / ||ref|| (L2 over all elements)."""
    return float(np.linalg.norm(test - ref) / max(np.linalg.norm(ref), _TINY))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.ravel(a).astype(np.float64), np.ravel(b).astype(np.float64)
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), _TINY))
