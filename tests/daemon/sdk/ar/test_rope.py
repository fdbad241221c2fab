"""RoPE tables equal upstream's rotary embedding (transformers' Qwen3)."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.ar.rope import rope_tables


def test_rope_tables_equal_transformers_default_rope() -> None:
    torch = pytest.importorskip("torch")
    from transformers import Qwen3Config
    from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding

    config = Qwen3Config(head_dim=16, hidden_size=64, num_attention_heads=4,
                         rope_theta=1234.0, max_position_embeddings=64)  # fmt: skip
    rope = Qwen3RotaryEmbedding(config)
    x = torch.zeros(1, 50, 16)
    cos, sin = rope(x, torch.arange(50)[None])
    ours_cos, ours_sin = rope_tables(16, 1234.0, 1.0, 50)
    np.testing.assert_allclose(ours_cos, cos[0].numpy(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(ours_sin, sin[0].numpy(), rtol=0, atol=1e-6)
    scaled_cos, _ = rope_tables(16, 1234.0, 0.5, 50)
    np.testing.assert_allclose(scaled_cos, 0.5 * ours_cos, rtol=1e-6)


def test_odd_head_dim_is_refused() -> None:
    with pytest.raises(ValueError, match="even head_dim, got 15"):
        rope_tables(15, 1e4, 1.0, 4)
