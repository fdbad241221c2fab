"""The exported graphs' I/O: static, in the contract's names, shapes and dtypes,
and what `graph_io` says without exporting."""

from __future__ import annotations

from typing import Any

import onnx
import pytest
import torch

from scripts.common.build.onnx_export import graph_spec
from scripts.qwen3.asr import export
from tests.scripts.qwen3.conftest import KV, PREFILL


def _io(path: Any) -> list[tuple[str, str, tuple[int, ...]]]:
    spec = graph_spec("g", path)
    return [(t.name, t.dtype, t.shape) for t in spec.inputs + spec.outputs]


def _want(io: export.GraphIo) -> list[tuple[str, str, tuple[int, ...]]]:
    return [(t.name, t.dtype, t.shape) for t in io.inputs + io.outputs]


@pytest.mark.parametrize("kv_dtype", [torch.float32, torch.float16])
def test_graph_io_is_what_the_exports_declare(
    asr_model: Any, asr_graphs: Any, kv_dtype: torch.dtype
) -> None:
    io = export.graph_io(asr_model.config, (PREFILL,), (KV,), kv_dtype)
    npu = kv_dtype == torch.float16
    prefill = asr_graphs.prefill_npu if npu else asr_graphs.prefill
    decode = asr_graphs.decode_npu if npu else asr_graphs.decode
    assert _io(asr_graphs.encoder) == _want(io[export.ENCODER])
    assert _io(prefill) == _want(io[export.prefill_name(PREFILL)])
    assert _io(decode) == _want(io[export.decode_name(KV)])


def test_the_contract_shapes_of_the_tiny_model(asr_model: Any) -> None:
    io = export.graph_io(asr_model.config, (PREFILL,), (KV,), torch.float16)
    v = asr_model.config.thinker_config.text_config.vocab_size
    enc = {t.name: t.shape for t in io["encoder"].inputs + io["encoder"].outputs}
    assert enc == {
        "mel": (4, 1, 128, 100),
        "stem_mask1": (4, 1, 1, 50),
        "stem_mask2": (4, 1, 1, 25),
        "key_mask": (1, 1, 1, 52),
        "audio": (52, 64),
    }
    dec = {
        t.name: (t.dtype, t.shape)
        for t in io["decode_48"].inputs + io["decode_48"].outputs
    }
    assert dec["k_cache"] == ("float16", (2, 2, KV, 16))
    assert dec["k_new"] == ("float16", (2, 2, 1, 16))
    assert dec["logits"] == ("float32", (1, v))
    assert dec["mask"] == ("float32", (1, 1, 1, KV))


def test_no_graph_squares_with_pow(asr_graphs: Any) -> None:
    """Upstream's norms square with pow(2); the exported graphs hold no Pow at
    all (docs/qwen3.md, export findings), and every op is a standard ONNX one."""
    for path in vars(asr_graphs).values():
        model = onnx.load(str(path))
        ops = {n.op_type for n in model.graph.node}
        assert "Pow" not in ops, path
        assert {n.domain for n in model.graph.node} <= {"", "ai.onnx"}
        assert {
            o.version for o in model.opset_import if o.domain in ("", "ai.onnx")
        } == {17}
