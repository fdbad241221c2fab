"""Test clips for the tiny Qwen3-ASR model."""

from __future__ import annotations

import numpy as np

from daemon.engines.qwen3.asr.audio import SAMPLE_RATE


def chirp(seconds: float, level: float = 0.3, seed: int = 0) -> np.ndarray:
    """A 16 kHz chirp with noise (what the random tiny model hears as speech)."""
    rng = np.random.default_rng(seed)
    t = np.arange(round(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    x = np.sin(2 * np.pi * (200 + 300 * t) * t) + 0.1 * rng.standard_normal(len(t))
    return (level * x).astype(np.float32)
