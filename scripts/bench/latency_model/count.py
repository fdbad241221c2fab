"""What one call of an ONNX graph computes and moves: MACs and bytes.

Read from the graph with onnx shape inference (no weights loaded: initializer
dims are enough, so multi-GB external-data models count in seconds):

- MACs exactly for MatMul, Gemm, Conv, ConvTranspose and two-operand Einsum;
  a MatMul whose both operands are computed (not from weights) is attention
  (Q·Kᵀ, P·V) and is also reported on its own.
- Weight bytes: every initializer/Constant once, floats at fp16 (the HTP graphs
  are compiled with fp16 compute, docs/board.md, reference port graphs), others at their
  dtype; a Gather from a weight table reads only the rows it outputs.
- I/O bytes at the graph's own dtypes; KV-cache inputs (name has "cache",
  "past" or "kT") are also reported as KV reads.
- Elements written by every other op (the elementwise term the fit may use).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, shape_inference

#: HTP compute dtype: weights stored and read as fp16 (--quantize_full_type float16)
WEIGHT_FLOAT_BYTES = 2
_FLOATS = {
    onnx.TensorProto.FLOAT,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.DOUBLE,
    onnx.TensorProto.BFLOAT16,
}
MAC_OPS = frozenset({"MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum"})
#: ops that only forward a weight (a weight through them is still a weight)
_PASS = frozenset(
    {
        "Cast",
        "Transpose",
        "Reshape",
        "Identity",
        "Unsqueeze",
        "Squeeze",
        "DequantizeLinear",
        "Flatten",
    }
)
_KV_MARKS = ("cache", "past", "kt")
#: ops producing shapes/indices, not data (not counted as elementwise work)
_SHAPE_OPS = frozenset({"Shape", "Constant", "ConstantOfShape", "Range", "Size"})


@dataclass(frozen=True)
class GraphCost:
    name: str
    macs: int
    attention_macs: int  # part of macs: MatMul of two computed operands
    conv_macs: int  # part of macs: Conv and ConvTranspose
    weight_bytes: int
    input_bytes: int
    output_bytes: int
    kv_bytes: int  # part of input_bytes
    elementwise: int  # elements written by non-MAC ops

    @property
    def io_bytes(self) -> int:
        return self.input_bytes + self.output_bytes

    @property
    def bytes_moved(self) -> int:
        """Weights read once + inputs read + outputs written."""
        return self.weight_bytes + self.io_bytes

    def features(self, io_bytes: int | None = None) -> dict[str, float]:
        """The fit's features (fit.py FEATURES); ``io_bytes`` overrides the
        graph's own I/O (the reference port's graphs take float32 I/O)."""
        io = self.io_bytes if io_bytes is None else io_bytes
        return {
            "macs": self.macs,
            "mm_macs": self.macs - self.conv_macs,
            "conv_macs": self.conv_macs,
            "weight_bytes": self.weight_bytes,
            "io_bytes": io,
            "bytes": self.weight_bytes + io,
            "elementwise": self.elementwise,
        }

    def scaled(self, name: str, base: GraphCost, times: int) -> GraphCost:
        """``base + times * (self - base)`` field by field: a graph whose
        repeated part (a layer) occurs ``times`` more often than in ``base``'s,
        when ``self`` has one repeat more than ``base``."""
        fields = (
            "macs",
            "attention_macs",
            "conv_macs",
            "weight_bytes",
            "input_bytes",
            "output_bytes",
            "kv_bytes",
            "elementwise",
        )
        vals = {
            f: getattr(base, f) + times * (getattr(self, f) - getattr(base, f))
            for f in fields
        }
        return GraphCost(name, **vals)


def _numel(shape: Iterable[int]) -> int:
    return math.prod(shape)


def _itemsize(elem_type: int) -> int:
    return int(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).itemsize)


def _value_shapes(graph: onnx.GraphProto) -> dict[str, tuple[tuple[int, ...], int]]:
    out: dict[str, tuple[tuple[int, ...], int]] = {}
    for v in [*graph.value_info, *graph.input, *graph.output]:
        t = v.type.tensor_type
        if not t.HasField("shape"):
            continue
        dims = tuple(
            d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim
        )
        out[v.name] = (dims, t.elem_type)
    for init in graph.initializer:
        out[init.name] = (tuple(init.dims), init.data_type)
    for node in graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    out[node.output[0]] = (tuple(a.t.dims), a.t.data_type)
    return out


class ShapeError(ValueError):
    pass


def _shape(shapes: dict, name: str, node: onnx.NodeProto) -> tuple[int, ...]:
    if name not in shapes or any(d <= 0 for d in shapes[name][0]):
        raise ShapeError(
            f"{node.op_type} {node.name or node.output[0]}: no static "
            f"shape for {name!r} after shape inference"
        )
    return shapes[name][0]


def _attr(node: onnx.NodeProto, name: str, default: int | str) -> int | str:
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def node_macs(node: onnx.NodeProto, shapes: dict) -> int:
    """Multiply-accumulates of one MAC op (0 for any other op)."""
    op = node.op_type
    if op == "MatMul":
        a = list(_shape(shapes, node.input[0], node))
        b = list(_shape(shapes, node.input[1], node))
        a = [1, *a] if len(a) == 1 else a
        b = [*b, 1] if len(b) == 1 else b
        batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
        return _numel(batch) * a[-2] * a[-1] * b[-1]
    if op == "Gemm":
        a = _shape(shapes, node.input[0], node)
        b = _shape(shapes, node.input[1], node)
        m, k = (a[1], a[0]) if _attr(node, "transA", 0) else a
        n = b[0] if _attr(node, "transB", 0) else b[1]
        return m * k * n
    if op == "Conv":
        w = _shape(shapes, node.input[1], node)  # [Cout, Cin/g, k...]
        y = _shape(shapes, node.output[0], node)
        return _numel(y) * _numel(w[1:])
    if op == "ConvTranspose":
        w = _shape(shapes, node.input[1], node)  # [Cin, Cout/g, k...]
        x = _shape(shapes, node.input[0], node)
        return _numel(x) * _numel(w[1:])
    if op == "Einsum":
        raw = _attr(node, "equation", "")
        eq = (raw.decode() if isinstance(raw, bytes) else str(raw)).replace(" ", "")
        terms = eq.split("->")[0].split(",")
        if len(terms) != 2 or "..." in eq:
            raise ShapeError(f"Einsum {eq!r}: only two explicit operands are counted")
        sizes: dict[str, int] = {}
        for term, name in zip(terms, node.input):
            sizes.update(zip(term, _shape(shapes, name, node)))
        return _numel(sizes.values())
    return 0


def _static_tensors(graph: onnx.GraphProto) -> set[str]:
    static = {i.name for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" or (
            node.op_type in _PASS and node.input and node.input[0] in static
        ):
            static.update(node.output)
    return static


def _weight_bytes(graph: onnx.GraphProto, shapes: dict) -> int:
    """Every weight once; a table only Gather reads counts the rows read."""
    roots = {i.name for i in graph.initializer} | {
        n.output[0] for n in graph.node if n.op_type == "Constant"
    }
    gathered: dict[str, int] = {}
    other: set[str] = set()
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name not in roots:
                continue
            if node.op_type == "Gather" and k == 0:
                dims, et = shapes.get(node.output[0], ((-1,), 0))
                if all(d > 0 for d in dims):
                    gathered[name] = gathered.get(name, 0) + _numel(dims)
                    continue
            other.add(name)
    total = 0
    for name in roots:
        dims, et = shapes[name]
        size = WEIGHT_FLOAT_BYTES if et in _FLOATS else _itemsize(et)
        if name in other:
            total += _numel(dims) * size
        elif name in gathered:
            total += min(gathered[name], _numel(dims)) * size
    return total


def _io_bytes(values: Iterable[onnx.ValueInfoProto], shapes: dict) -> tuple[int, int]:
    total = kv = 0
    for v in values:
        dims, et = shapes[v.name]
        n = _numel(dims) * _itemsize(et)
        total += n
        if any(m in v.name.lower() for m in _KV_MARKS):
            kv += n
    return total, kv


def load(path: str | Path) -> onnx.ModelProto:
    """The graph with every shape inferred (weights stay on disk)."""
    model = onnx.load(str(path), load_external_data=False)
    return shape_inference.infer_shapes(model, data_prop=True)


def graph_cost(model: onnx.ModelProto, name: str) -> GraphCost:
    g = model.graph
    shapes = _value_shapes(g)
    static = _static_tensors(g)
    macs = attn = conv = elems = 0
    for node in g.node:
        m = node_macs(node, shapes)
        macs += m
        if node.op_type in ("Conv", "ConvTranspose"):
            conv += m
        if node.op_type == "MatMul" and not set(node.input) & static:
            attn += m
        if m == 0 and node.op_type not in _SHAPE_OPS and node.output[0] not in static:
            dims = shapes.get(node.output[0], ((),))[0]
            if all(d > 0 for d in dims):
                elems += _numel(dims)
    inputs = [i for i in g.input if i.name not in {x.name for x in g.initializer}]
    in_bytes, kv = _io_bytes(inputs, shapes)
    out_bytes, _ = _io_bytes(g.output, shapes)
    return GraphCost(
        name, macs, attn, conv, _weight_bytes(g, shapes), in_bytes, out_bytes, kv, elems
    )


def cost(path: str | Path, name: str | None = None) -> GraphCost:
    """Count the graph at ``path`` (its file stem names it unless ``name``)."""
    return graph_cost(load(path), name or Path(path).stem)
