"""The talker and text-projection graphs (fp32 ONNX on the CPU backend) against
upstream's torch talker: the CPU gates of scripts/qwen3/tts/graphs/gates.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest

from scripts.common.build.runners import cpu_runner
from scripts.qwen3.tts.graphs import gates

PROMPT, STEPS = 12, 7


def _rows(model: Any, n: int, seed: int) -> np.ndarray:
    """Talker input rows as large as real ones: sums of codec embedding rows."""
    table = model.talker.model.codec_embedding.weight.detach().numpy()
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(table), (n, 3))
    return table[picks].sum(1).astype(np.float32)


@pytest.fixture(scope="module")
def rows(tts_custom: Any) -> tuple[np.ndarray, np.ndarray]:
    return _rows(tts_custom, PROMPT, 0), _rows(tts_custom, STEPS, 1)


def test_talker_graphs_pass_the_cpu_gates(
    tts_custom: Any, talker_graphs: Any, rows: Any
) -> None:
    """Padded prefill + teacher-forced steps = upstream's full forward
    (its M-RoPE with equal rows is the runtime's plain RoPE table)."""
    cfg = tts_custom.talker.config
    assert cfg.rope_scaling.get("mrope_section"), "the tiny talker uses M-RoPE"
    prefill, decode = (
        cpu_runner(talker_graphs.prefill),
        cpu_runner(talker_graphs.decode),
    )
    results = gates.gate_talker(tts_custom, prefill, decode, *rows)
    assert [r.name for r in results] == ["talker logits", "talker logits", "talker h"]
    assert all(r.passed for r in results), [str(r) for r in results]


def test_fp16_kv_graphs_bind_fp16_caches(
    tts_custom: Any, talker_graphs: Any, rows: Any
) -> None:
    prefill = cpu_runner(talker_graphs.prefill_npu)
    decode = cpu_runner(talker_graphs.decode_npu)
    kinds = {t.name: t.dtype for t in (*decode.inputs, *decode.outputs)}
    assert kinds["k_cache"] == kinds["v_new"] == "float16"
    assert kinds["x"] == kinds["logits"] == kinds["h"] == "float32"
    want, _ = gates.talker_reference(tts_custom, np.concatenate(rows))
    got, _ = gates.talker_graphs(tts_custom, prefill, decode, *rows)
    ref = want[PROMPT - 1 :]
    assert np.abs(got - ref).max() / np.abs(ref).max() < 1e-3
    assert (got.argmax(-1) == ref.argmax(-1)).all()


def test_talker_io_is_the_contract(tts_custom: Any, talker_graphs: Any) -> None:
    from tests.scripts.qwen3.tts.conftest import KV, PREFILL

    t = tts_custom.talker.config
    hd, ly, kh = t.head_dim, t.num_hidden_layers, t.num_key_value_heads
    want_prefill = {
        "x": (1, PREFILL, t.hidden_size),
        "mask": (1, 1, PREFILL, PREFILL),
        "cos": (1, PREFILL, hd),
        "sin": (1, PREFILL, hd),
        "last": (1, PREFILL),
        "logits": (1, t.vocab_size),
        "h": (1, t.hidden_size),
        "k": (ly, kh, PREFILL, hd),
        "v": (ly, kh, PREFILL, hd),
    }
    want_decode = {
        "x": (1, 1, t.hidden_size),
        "k_cache": (ly, kh, KV, hd),
        "v_cache": (ly, kh, KV, hd),
        "mask": (1, 1, 1, KV),
        "cos": (1, 1, hd),
        "sin": (1, 1, hd),
        "logits": (1, t.vocab_size),
        "h": (1, t.hidden_size),
        "k_new": (ly, kh, 1, hd),
        "v_new": (ly, kh, 1, hd),
    }
    for path, want in (
        (talker_graphs.prefill, want_prefill),
        (talker_graphs.decode, want_decode),
    ):
        r = cpu_runner(path)
        got = {s.name: tuple(s.shape) for s in (*r.inputs, *r.outputs)}
        assert got == want


def test_talker_gate_fails_for_another_model(
    tts_custom: Any, tts_base: Any, talker_graphs: Any, rows: Any
) -> None:
    """The gate can fail: the custom graphs against the base checkpoint."""
    prefill, decode = (
        cpu_runner(talker_graphs.prefill),
        cpu_runner(talker_graphs.decode),
    )
    results = gates.gate_talker(tts_base, prefill, decode, *rows)
    assert not any(r.passed for r in results)


def test_text_proj_passes_the_cpu_gate(tts_custom: Any, talker_graphs: Any) -> None:
    runner = cpu_runner(talker_graphs.text_proj)
    result = gates.gate_text_proj(tts_custom, runner, [3, 17, 40, 5, 99])
    assert result.passed, str(result)
    assert cpu_runner(talker_graphs.text_proj).outputs[0].shape[1] == (
        tts_custom.talker.config.hidden_size
    )


def test_no_talker_graph_squares_with_pow(talker_graphs: Any) -> None:
    """docs/qwen3.md, export findings: no Pow at all (RMSNorm squares as x·x)."""
    for path in vars(talker_graphs).values():
        assert "Pow" not in op_types(path), path.name


def op_types(path: Any) -> set[str]:
    model = onnx.load(str(path), load_external_data=False)
    return {n.op_type for n in model.graph.node}
