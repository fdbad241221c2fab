"""The widths every tiny Qwen3 decoder stack shares: Qwen3-ASR's thinker text
model (scripts/qwen3/asr/tiny.py) and Qwen3-TTS's talker and code predictor
(scripts/qwen3/tts/tiny.py). The tiny dims are one team contract for both
families, and the graphs of both are built by one decoder
(scripts/qwen3/common/decoder.py), so the stacks keep one shape; each writer
adds what its upstream config reads besides (vocabulary, activation, its own
M-RoPE keys, positions).
"""

from __future__ import annotations

from typing import Any, Final

#: 2 layers (the K/V caches' layer axis is not 1), 4 query heads over 2 KV
#: heads (GQA groups of 2, so the graphs' head grouping runs), head_dim 16, so
#: hidden 64 = heads x head_dim; the MLP twice as wide; one RoPE base for all.
DECODER: Final[dict[str, Any]] = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "rope_theta": 1_000_000.0,
}
#: M-RoPE sections sum to head_dim / 2; None breaks upstream's rotary init and
#: forward (docs/qwen3.md, tiny models)
MROPE: Final[dict[str, Any]] = {
    "rope_type": "default",
    "mrope_section": [2, 3, 3],
    "interleaved": True,
}
#: the talker's and the thinker text model's position table (the predictor's
#: is per frame, its own)
MAX_POSITIONS: Final = 4096
