"""Generic ONNX surgery: cut a sub-graph out, make it static, fold it, check its ops.

Piper voices are exported by torch with dynamic axes, so every length-dependent
shape is computed at run time (Shape -> Gather -> Range ...). The HTP needs
static graphs: we cut at explicit tensors, pin every input shape, and let
onnxruntime's basic optimiser fold the shape arithmetic into constants. The
result only contains standard ONNX ops (basic level never emits contrib ops).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

# Opset of the Piper exporter (piper/train/export_onnx.py OPSET_VERSION).
PIPER_OPSET = 15


class ConversionError(RuntimeError):
    """A voice cannot be converted; the message names what and where."""


class UnplannedOpError(ConversionError):
    """A graph holds an op outside the plan for the place it sits in."""

    def __init__(self, graph: str, op_type: str, node: str, plan: Iterable[str]):
        self.graph, self.op_type, self.node = graph, op_type, node
        super().__init__(
            f"{graph}: op {op_type} at node {node!r} is not planned for this part "
            f"(planned: {', '.join(sorted(plan))}); the voice uses a layer this "
            "converter does not know where to run"
        )


@dataclass(frozen=True)
class TensorSpec:
    """A graph input or output of a cut: new name, element type and static shape."""

    name: str
    elem_type: int
    shape: tuple[int, ...]


def producers(graph: onnx.GraphProto) -> dict[str, onnx.NodeProto]:
    return {out: node for node in graph.node for out in node.output if out}


def consumers(graph: onnx.GraphProto, tensor: str) -> list[onnx.NodeProto]:
    return [node for node in graph.node if tensor in node.input]


def node_by_name(graph: onnx.GraphProto, name: str) -> onnx.NodeProto:
    for node in graph.node:
        if node.name == name:
            return node
    raise ConversionError(f"voice graph has no node {name!r}: not a Piper VITS export")


def only_consumer(graph: onnx.GraphProto, tensor: str, op_type: str) -> onnx.NodeProto:
    found = [n for n in consumers(graph, tensor) if n.op_type == op_type]
    if len(found) != 1:
        raise ConversionError(
            f"expected one {op_type} consuming {tensor!r}, found {len(found)}"
        )
    return found[0]


def extract(
    model: onnx.ModelProto,
    inputs: Mapping[str, TensorSpec],
    outputs: Mapping[str, TensorSpec],
    graph_name: str,
) -> onnx.ModelProto:
    """Cut the nodes between `inputs` and `outputs` (keys: tensor names in `model`).

    Walks back from the outputs and stops at the given inputs and initializers;
    anything else the cut would still need (e.g. an original graph input) is an
    error, because it means the cut is not where we believe it is.
    """
    graph = model.graph
    made_by = {out: i for i, node in enumerate(graph.node) for out in node.output}
    inits = {t.name: t for t in graph.initializer}
    needed: set[str] = set()
    keep: set[int] = set()
    stack = list(outputs)
    while stack:
        tensor = stack.pop()
        if tensor in needed or tensor in inputs or tensor in inits or not tensor:
            continue
        needed.add(tensor)
        index = made_by.get(tensor)
        if index is None:
            raise ConversionError(
                f"{graph_name}: tensor {tensor!r} is neither computed in the cut "
                "nor one of its inputs"
            )
        if index not in keep:
            keep.add(index)
            node = graph.node[index]
            stack.extend(node.input)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    raise ConversionError(
                        f"{graph_name}: node {node.name!r} ({node.op_type}) has a "
                        "sub-graph; control flow is not planned for"
                    )
    nodes = [graph.node[i] for i in sorted(keep)]  # original (topological) order
    used = {i for n in nodes for i in n.input}
    new_graph = helper.make_graph(
        nodes=[_copy(n) for n in nodes],
        name=graph_name,
        inputs=[_value_info(s) for s in inputs.values()],
        outputs=[_value_info(s) for s in outputs.values()],
        initializer=[inits[name] for name in sorted(used & inits.keys())],
    )
    renames = {old: spec.name for old, spec in {**inputs, **outputs}.items()}
    for node in new_graph.node:
        node.input[:] = [renames.get(i, i) for i in node.input]
        node.output[:] = [renames.get(o, o) for o in node.output]
    out = helper.make_model(
        new_graph, opset_imports=list(model.opset_import), producer_name="hexvoice"
    )
    out.ir_version = model.ir_version
    return out


def _copy(node: onnx.NodeProto) -> onnx.NodeProto:
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    return copy


def _value_info(spec: TensorSpec) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(spec.name, spec.elem_type, list(spec.shape))


def retype_index_input(model: onnx.ModelProto, name: str) -> None:
    """Turn an int64 index input into int32 (the HTP has no 64-bit integers).

    Gather accepts int32 indices directly; any other consumer gets a Cast back to
    int64 so the graph stays valid and the folder decides what to keep.
    """
    graph = model.graph
    (inp,) = [i for i in graph.input if i.name == name]
    inp.type.tensor_type.elem_type = TensorProto.INT32
    users = consumers(graph, name)
    if all(n.op_type == "Gather" and list(n.input).index(name) == 1 for n in users):
        return
    wide = f"{name}_int64"
    for node in users:
        node.input[:] = [wide if i == name else i for i in node.input]
    cast = helper.make_node("Cast", [name], [wide], to=TensorProto.INT64)
    graph.node.insert(0, cast)


def fold(model: onnx.ModelProto, workdir: Path | None = None) -> onnx.ModelProto:
    """Fold the now-static shape arithmetic with onnxruntime's basic optimiser."""
    import onnxruntime as ort

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        src, dst = Path(tmp) / "in.onnx", Path(tmp) / "out.onnx"
        onnx.save(model, src)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = str(dst)
        ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
        folded = onnx.load(dst)
    folded.graph.name = model.graph.name
    drop_neutral_constants(folded)
    return onnx.shape_inference.infer_shapes(folded, strict_mode=True)


# (op, which input may be the neutral constant, neutral value)
_NEUTRAL = {
    "Add": ((0, 1), 0.0),
    "Sub": ((1,), 0.0),
    "Mul": ((0, 1), 1.0),
    "Div": ((1,), 1.0),
}


def drop_neutral_constants(model: onnx.ModelProto) -> int:
    """Remove x + 0, x - 0, x * 1, x / 1 left by folding; return how many.

    VITS builds accumulators with zeros_like() and mean-only flows with exp(0);
    once shapes are static these fold into full-size constant tensors (20 MB of
    zeros in a 1024-frame flow) that would be shipped and streamed by the HTP.
    Only constants that do not widen the other operand by broadcasting go.
    """
    graph = model.graph
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*inferred.input, *inferred.value_info]
    }
    inits = {t.name: t for t in graph.initializer}
    outputs = {o.name for o in graph.output}
    rewire: dict[str, str] = {}
    dropped = []
    for node in graph.node:
        rule = _NEUTRAL.get(node.op_type)
        if rule is None or node.output[0] in outputs:
            continue
        positions, neutral = rule
        for pos in positions:
            const = inits.get(node.input[pos])
            other = node.input[1 - pos]
            if const is None or other not in shapes and other not in inits:
                continue
            value = onnx.numpy_helper.to_array(const)
            other_shape = shapes.get(other) or list(inits[other].dims)
            if not np.all(value == neutral) or 0 in other_shape:
                continue
            if list(np.broadcast_shapes(value.shape, other_shape)) != other_shape:
                continue
            rewire[node.output[0]] = rewire.get(other, other)
            dropped.append(node)
            break
    for node in dropped:
        graph.node.remove(node)
    for node in graph.node:
        node.input[:] = [rewire.get(i, i) for i in node.input]
    used = {i for n in graph.node for i in n.input}
    for tensor in [t for t in graph.initializer if t.name not in used]:
        graph.initializer.remove(tensor)
    return len(dropped)


def check_plan(model: onnx.ModelProto, plan: frozenset[str]) -> None:
    """Fail on the first node whose op is not in `plan` (standard domain only)."""
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx") or node.op_type not in plan:
            op = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
            raise UnplannedOpError(model.graph.name, op, node.name, plan)


def op_histogram(model: onnx.ModelProto) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def initializer(model: onnx.ModelProto, name: str) -> np.ndarray:
    for tensor in model.graph.initializer:
        if tensor.name == name:
            return onnx.numpy_helper.to_array(tensor)
    raise ConversionError(f"voice graph has no initializer {name!r}")


def constant_input(
    model: onnx.ModelProto, node: onnx.NodeProto, index: int
) -> np.ndarray | None:
    """Value of a node input if it is an initializer, else None."""
    if index >= len(node.input) or not node.input[index]:
        return None
    name = node.input[index]
    for tensor in model.graph.initializer:
        if tensor.name == name:
            return onnx.numpy_helper.to_array(tensor)
    return None


def attrs(node: onnx.NodeProto) -> dict[str, object]:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}
