"""RoPE cos/sin tables, computed on the CPU for graphs that take them as inputs.

Qwen3's decoders (ASR text decoder, TTS talker and code predictor;
docs/qwen3.md, text decoder; TTS components) all use upstream's default rope:
``inv_freq = 1 / theta^(2i/d)``, ``emb = cat(freqs, freqs)``, cos and sin
times the rope init's attention scaling.  M-RoPE with equal position rows (text
or audio only) is this same table.
"""

from __future__ import annotations

import numpy as np


def rope_tables(
    head_dim: int, theta: float, scaling: float, positions: int
) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin float32 [positions, head_dim] for positions 0 .. positions - 1."""
    if head_dim % 2:
        raise ValueError(f"RoPE needs an even head_dim, got {head_dim}")
    # float32 operands as upstream's torch code has them, each transcendental
    # evaluated in float64 and rounded once: numpy's own float32 pow/cos/sin
    # are SIMD approximations (numpy 2.4 measured 3.7e-6 off torch's at angle
    # 25 rad), torch's are within an ulp of the correctly rounded value.
    exponent = np.arange(0, head_dim, 2).astype(np.float32) / np.float32(head_dim)
    power = np.float64(np.float32(theta)) ** exponent.astype(np.float64)
    inv_freq = (np.float32(1.0) / power.astype(np.float32)).astype(np.float32)
    freqs = np.arange(positions, dtype=np.float32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1).astype(np.float64)
    scale = np.float32(scaling)
    cos = np.cos(emb).astype(np.float32) * scale
    sin = np.sin(emb).astype(np.float32) * scale
    return cos, sin
