"""Stand-in T2S graphs for scripts/bench/gptsovits/engine.py: full-size
GPT-SoVITS I/O, next to no compute.

For measuring the host side of the decode loop (everything but graphExecute)
with real buffer sizes (24 layers, 16 heads, head dim 32, width 512, P 512,
KV 1024, fp16 K/V: docs/gpt-sovits.md, T2S, docs/board.md,
reference port graphs) without a full model, which the x86 simulator runs at
seconds per step. The sizes are the engine's own params (engine.py
full_params), so the graphs' I/O is what the T2S loop binds.
Every input feeds an output, so no compiler drops one; outputs have the real
shapes and dtypes, so the engine binds and writes back exactly as for a voice.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from daemon.engines.gptsovits.layout import GsvParams
from scripts.bench.standin import i64, save, vi


def _kv_from(name: str, src: str, rows: int, d: GsvParams) -> list[onnx.NodeProto]:
    """[1, rows, W] float -> [layers, heads, rows, dh] float16 (tile + reshape)."""
    return [
        helper.make_node("Tile", [src, "tile_reps"], [f"{name}_t"]),
        helper.make_node("Reshape", [f"{name}_t", f"shape_{rows}"], [f"{name}_r"]),
        helper.make_node("Transpose", [f"{name}_r"], [f"{name}_p"], perm=[0, 2, 1, 3]),
        helper.make_node("Cast", [f"{name}_p"], [name], to=TensorProto.FLOAT16),
    ]


def _consts(d: GsvParams, rows: tuple[int, ...]) -> list[onnx.TensorProto]:
    out = [i64("tile_reps", [d.layers, 1, 1])]
    out += [i64(f"shape_{r}", [d.layers, r, d.heads, d.head_dim]) for r in rows]
    return out


def prefill_graph(path: Path, d: GsvParams) -> Path:
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
            vi("xy", f32, [1, p, w]),
            vi("mask", f32, [1, 1, p, p]),
        ],
        [
            vi("h", f32, [1, p, w]),
            vi("k", f16, kv),
            vi("v", f16, kv),
        ],
        _consts(d, (p,)),
    )
    return save(graph, path)


def decode_graph(path: Path, d: GsvParams) -> Path:
    """The decode graph of the largest KV bucket (one bucket is enough to time
    the host's per-step work)."""
    w, n = d.width, d.kv_buckets[-1]
    f32, f16 = TensorProto.FLOAT, TensorProto.FLOAT16
    cache = [d.layers, d.heads, n, d.head_dim]
    new = [d.layers, d.heads, 1, d.head_dim]
    rng = np.random.default_rng(0)
    proj = (rng.standard_normal((w, d.vocab)) / np.sqrt(w)).astype(np.float32)
    inits = [
        numpy_helper.from_array(proj, "proj"),
        i64("zero", [0]),
        i64("one", [1]),
        i64("axis2", [2]),
        i64("row", [1, w]),
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
            vi("x", f32, [1, 1, w]),
            vi("k_cache", f16, cache),
            vi("v_cache", f16, cache),
            vi("mask", f32, [1, 1, 1, n]),
        ],
        [
            vi("logits", f32, [1, d.vocab]),
            vi("k_new", f16, new),
            vi("v_new", f16, new),
        ],
        inits,
    )
    return save(graph, path)
