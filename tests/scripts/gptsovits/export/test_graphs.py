"""Exported graphs: static fp32 I/O in the documented order, HTP-compilable."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from scripts.common.build.onnx_export import GraphSpec, TensorSpec, graph_spec
from scripts.gptsovits.shapes import TINY

# Tiny voice dims (P=160, KV 192/224): T2S 2 layers x 4 heads x 16, width 64;
# SoVITS inter 32, hidden 64, ssl 48, mrte 96, gin 80; vocoder window 32.
EXPECTED = {
    "t2s_prefill": (
        [("xy", (1, 160, 64)), ("mask", (1, 1, 160, 160))],
        [("h", (1, 160, 64)), ("k", (2, 4, 160, 16)), ("v", (2, 4, 160, 16))],
    ),
    "t2s_decode_L192": (
        [
            ("x", (1, 1, 64)),
            ("k_cache", (2, 4, 192, 16)),
            ("v_cache", (2, 4, 192, 16)),
            ("mask", (1, 1, 1, 192)),
        ],
        [("logits", (1, 1025)), ("k_new", (2, 4, 1, 16)), ("v_new", (2, 4, 1, 16))],
    ),
    "vits_enc": (
        [
            ("ssl", (1, 48, 128)),
            ("y_mask", (1, 1, 128)),
            ("text", (1, 64, 32)),
            ("text_mask", (1, 1, 32)),
            ("ge512", (1, 96, 1)),
            ("ge", (1, 80, 1)),
            ("noise", (1, 32, 128)),
            # speed (speed.py): encoder2's frames -> stretched frames, and their mask
            ("stretch", (1, 128, 128)),
            ("z_mask", (1, 1, 128)),
        ],
        [("z", (1, 32, 128))],
    ),
    "vits_gen": (
        [("z", (1, 32, 32)), ("ge", (1, 80, 1)), ("mask", (1, 1, 32))],
        [("audio", (1, 1, 32 * 640))],
    ),
}


def test_graph_set(tiny_graphs: dict[str, GraphSpec]) -> None:
    decode = {f"t2s_decode_L{n}" for n in TINY.kv_buckets}
    assert set(tiny_graphs) == {"t2s_prefill", "vits_enc", "vits_gen"} | decode


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_graph_io(tiny_graphs: dict[str, GraphSpec], name: str) -> None:
    spec = tiny_graphs[name]
    inputs, outputs = EXPECTED[name]
    assert spec.inputs == tuple(TensorSpec(n, "float32", s) for n, s in inputs)
    assert spec.outputs == tuple(TensorSpec(n, "float32", s) for n, s in outputs)


def test_fp16_kv_variant_io(tiny_t2s_kv16: dict[str, GraphSpec]) -> None:
    prefill, decode = tiny_t2s_kv16["t2s_prefill"], tiny_t2s_kv16["t2s_decode_L192"]
    assert [t.dtype for t in prefill.inputs] == ["float32", "float32"]
    assert [t.dtype for t in prefill.outputs] == ["float32", "float16", "float16"]
    assert [t.dtype for t in decode.inputs] == [
        "float32",
        "float16",
        "float16",
        "float32",
    ]
    assert [t.dtype for t in decode.outputs] == ["float32", "float16", "float16"]
    assert decode.inputs[1].shape == (2, 4, 192, 16)


def test_graphs_are_plain_static_onnx(tiny_graphs: dict[str, GraphSpec]) -> None:
    for spec in tiny_graphs.values():
        model = onnx.load(str(spec.path))
        ops = {n.op_type for n in model.graph.node}
        domains = {n.domain for n in model.graph.node}
        assert domains <= {""}, (spec.name, domains)
        # Shape arithmetic must have been folded away for the static graph.
        assert not ops & {"Shape", "ConstantOfShape", "Where", "Range"}, (
            spec.name,
            ops,
        )
        # Weight norm is folded into constant conv weights.
        assert "ReduceL2" not in ops and "Sqrt" not in ops, spec.name


def test_dynamic_graph_rejected(tmp_path: Path) -> None:
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 3])
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]
    )
    onnx.save(onnx.helper.make_model(graph), str(tmp_path / "dyn.onnx"))
    with pytest.raises(ValueError, match="dynamic shape"):
        graph_spec("dyn", tmp_path / "dyn.onnx")


def test_graphs_compile_for_htp(
    tiny_graphs: dict[str, GraphSpec],
    tiny_t2s_kv16: dict[str, GraphSpec],
    qnn_cache: Path,
    tmp_path: Path,
) -> None:
    """Every op is accepted by the HTP (CPU fallback disabled, fp16, v73)."""
    qnn_compile = pytest.importorskip("scripts.common.qnn_compile")
    pytest.importorskip("onnxruntime_qnn")
    kv16 = [s for s in tiny_t2s_kv16.values() if s.name.endswith("L192")]
    for spec in [*tiny_graphs.values(), *kv16]:
        result = qnn_compile.compile_onnx(
            spec.path, tmp_path / spec.path.parent.name, cache_dir=qnn_cache
        )
        assert result.bin_path.stat().st_size > 0, spec.name
