"""cp_step (fp32 ONNX on the CPU backend) against upstream's code predictor:
all 15 heads teacher-forced, for both projection layouts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scripts.common.build.runners import cpu_runner
from scripts.qwen3.tts.graphs import gates

FRAMES = 3


def _frames(model: Any, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per frame a talker-like past_hidden [n, Ht] and 16 codes [n, 16]."""
    cfg = model.talker.config
    rng = np.random.default_rng(seed)
    hidden = rng.standard_normal((FRAMES, cfg.hidden_size)).astype(np.float32)
    codebook = cfg.code_predictor_config.vocab_size
    return hidden, rng.integers(0, codebook, (FRAMES, cfg.num_code_groups))


@pytest.mark.parametrize("kind", ["custom", "base"])
def test_cp_step_passes_the_cpu_gates_for_all_heads(
    kind: str, tts_custom: Any, tts_base: Any, cp_graphs: dict[str, Any]
) -> None:
    """custom_voice: predictor as wide as the talker (projection Identity);
    base: narrower, small_to_mtp_projection a Linear inside the graph."""
    model = tts_custom if kind == "custom" else tts_base
    projection = type(model.talker.code_predictor.small_to_mtp_projection).__name__
    assert projection == ("Identity" if kind == "custom" else "Linear")
    results = gates.gate_predictor(
        model, cpu_runner(cp_graphs[kind]), *_frames(model, 0)
    )
    assert all(r.passed for r in results), [str(r) for r in results]


def test_cp_step_io_is_the_contract(tts_base: Any, cp_graphs: dict[str, Any]) -> None:
    t = tts_base.talker.config
    c = t.code_predictor_config
    r = cpu_runner(cp_graphs["base"])
    kv = (c.num_hidden_layers, c.num_key_value_heads, 16, c.head_dim)
    new = (*kv[:2], 1, kv[3])
    got = {s.name: (s.dtype, tuple(s.shape)) for s in (*r.inputs, *r.outputs)}
    f32 = "float32"
    assert got == {
        "x": (f32, (1, 1, t.hidden_size)),
        "k_cache": (f32, kv),
        "v_cache": (f32, kv),
        "mask": (f32, (1, 1, 1, 16)),
        "cos": (f32, (1, 1, c.head_dim)),
        "sin": (f32, (1, 1, c.head_dim)),
        "head": ("int32", (1,)),
        "logits": (f32, (1, c.vocab_size)),
        "k_new": (f32, new),
        "v_new": (f32, new),
    }


def test_head_input_picks_upstreams_lm_head(
    tts_custom: Any, cp_graphs: dict[str, Any]
) -> None:
    """Position s must use lm_head[s-1]: the graph driven with heads one off
    fails the gate (the table/head offset that is easy to get wrong)."""
    hidden, codes = _frames(tts_custom, 1)
    rows = gates.predictor_rows(tts_custom, hidden, codes)
    want = gates.predictor_reference(tts_custom, rows)
    got = gates.predictor_graph(tts_custom, cpu_runner(cp_graphs["custom"]), rows)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    shifted = np.roll(want, 1, axis=1)
    assert np.mean(shifted.argmax(-1) == got.argmax(-1)) < 0.5
