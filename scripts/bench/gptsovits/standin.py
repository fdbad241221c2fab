"""Stand-in T2S graphs for scripts/bench/gptsovits/engine.py: full-size
GPT-SoVITS I/O, next to no compute.

For measuring the host side of the decode loop (everything but graphExecute)
with real buffer sizes (24 layers, 16 heads, head dim 32, width 512, P 512,
KV 1024, fp16 K/V: docs/gpt-sovits.md, T2S, docs/board.md,
reference port graphs) without a full model, which the x86 simulator runs at
seconds per step.
Every input feeds an output, so no compiler drops one; outputs have the real
shapes and dtypes, so the engine binds and writes back exactly as for a voice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


@dataclass(frozen=True)
class FullDims:
    layers: int = 24
    heads: int = 16
    head_dim: int = 32
    vocab: int = 1025
    prefill_len: int = 512
    kv_len: int = 1024

    @property
    def width(self) -> int:
        return self.heads * self.head_dim


def _kv_from(name: str, src: str, rows: int, d: FullDims) -> list[onnx.NodeProto]:
    """[1, rows, W] float -> [layers, heads, rows, dh] float16 (tile + reshape)."""
    return [
        helper.make_node("Tile", [src, "tile_reps"], [f"{name}_t"]),
        helper.make_node("Reshape", [f"{name}_t", f"shape_{rows}"], [f"{name}_r"]),
        helper.make_node("Transpose", [f"{name}_r"], [f"{name}_p"], perm=[0, 2, 1, 3]),
        helper.make_node("Cast", [f"{name}_p"], [name], to=TensorProto.FLOAT16),
    ]


def _consts(d: FullDims, rows: tuple[int, ...]) -> list[onnx.TensorProto]:
    out = [numpy_helper.from_array(np.array([d.layers, 1, 1], np.int64), "tile_reps")]
    for r in rows:
        shape = np.array([d.layers, r, d.heads, d.head_dim], np.int64)
        out.append(numpy_helper.from_array(shape, f"shape_{r}"))
    return out


def prefill_graph(path: Path, d: FullDims = FullDims()) -> Path:
    p, w = d.prefill_len, d.width
    f32, f16 = TensorProto.FLOAT, TensorProto.FLOAT16
    kv = [d.layers, d.heads, p, d.head_dim]
    nodes = [
        helper.make_node("ReduceMean", ["mask"], ["mask_mean"], keepdims=0),
        helper.make_node("Add", ["xy", "mask_mean"], ["h"]),
        *_kv_from("k", "xy", p, d),
        *_kv_from("v", "h", p, d),
    ]
    graph = helper.make_graph(
        nodes,
        "t2s_prefill_standin",
        [
            helper.make_tensor_value_info("xy", f32, [1, p, w]),
            helper.make_tensor_value_info("mask", f32, [1, 1, p, p]),
        ],
        [
            helper.make_tensor_value_info("h", f32, [1, p, w]),
            helper.make_tensor_value_info("k", f16, kv),
            helper.make_tensor_value_info("v", f16, kv),
        ],
        _consts(d, (p,)),
    )
    return _save(graph, path)


def decode_graph(path: Path, d: FullDims = FullDims()) -> Path:
    w, n = d.width, d.kv_len
    f32, f16 = TensorProto.FLOAT, TensorProto.FLOAT16
    cache = [d.layers, d.heads, n, d.head_dim]
    new = [d.layers, d.heads, 1, d.head_dim]
    rng = np.random.default_rng(0)
    proj = (rng.standard_normal((w, d.vocab)) / np.sqrt(w)).astype(np.float32)
    inits = [
        numpy_helper.from_array(proj, "proj"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([2], np.int64), "axis2"),
        numpy_helper.from_array(np.array([1, w], np.int64), "row"),
        *_consts(d, (1,)),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "row"], ["x2"]),
        helper.make_node("ReduceMean", ["mask"], ["mask_mean"], keepdims=0),
        helper.make_node("MatMul", ["x2", "proj"], ["raw"]),
        helper.make_node("Add", ["raw", "mask_mean"], ["logits"]),
        *_kv_from("k_x", "x", 1, d),
        *_kv_from("v_x", "x", 1, d),
        helper.make_node("Slice", ["k_cache", "zero", "one", "axis2"], ["k_row"]),
        helper.make_node("Slice", ["v_cache", "zero", "one", "axis2"], ["v_row"]),
        helper.make_node("Add", ["k_x", "k_row"], ["k_new"]),
        helper.make_node("Add", ["v_x", "v_row"], ["v_new"]),
    ]
    graph = helper.make_graph(
        nodes,
        f"t2s_decode_standin_{n}",
        [
            helper.make_tensor_value_info("x", f32, [1, 1, w]),
            helper.make_tensor_value_info("k_cache", f16, cache),
            helper.make_tensor_value_info("v_cache", f16, cache),
            helper.make_tensor_value_info("mask", f32, [1, 1, 1, n]),
        ],
        [
            helper.make_tensor_value_info("logits", f32, [1, d.vocab]),
            helper.make_tensor_value_info("k_new", f16, new),
            helper.make_tensor_value_info("v_new", f16, new),
        ],
        inits,
    )
    return _save(graph, path)


def _save(graph: onnx.GraphProto, path: Path) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path
