"""Which op of a graph the HTP refused, for a compile error that names it.

scripts/common/qnn_compile.py builds one context binary per graph with CPU
fallback disabled, so a graph the HTP cannot take whole fails instead of
silently splitting.  Its error does not say which node is at fault;
`find_unsupported` narrows it down by compiling each op kind alone as a
one-node graph with the shapes it has in the model.  A build's compile
stages call it only when a compile failed (CompilePlan.explain; Piper's
build does).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import onnx

from scripts.common.qnn_compile import qnn_session

DEFAULT_TARGET = "qcs8550"


def find_unsupported(model_path: Path, target: str = DEFAULT_TARGET) -> str:
    """Name the first op kind the HTP rejects, with the node it sits in."""
    model = onnx.shape_inference.infer_shapes(onnx.load(model_path), strict_mode=True)
    graph = model.graph
    values = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    inits = {t.name: t for t in graph.initializer}
    tried: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="htp_probe_") as tmp:
        for node in graph.node:
            if node.op_type in tried:
                continue
            tried.add(node.op_type)
            probe = _single_node_model(model, node, values, inits)
            if probe is None:
                continue
            path = Path(tmp) / f"{node.op_type}.onnx"
            onnx.save(probe, path)
            try:
                qnn_session(path, target)
            except Exception:  # onnxruntime raises its own exception types
                return f"HTP rejects op {node.op_type} at node {node.name!r}"
    return "no op is rejected alone (a graph-level limit, e.g. memory)"


def _single_node_model(
    model: onnx.ModelProto,
    node: onnx.NodeProto,
    values: dict[str, onnx.ValueInfoProto],
    inits: dict[str, onnx.TensorProto],
) -> onnx.ModelProto | None:
    inputs = [i for i in node.input if i and i not in inits]
    outputs = [o for o in node.output if o]
    if any(name not in values for name in [*inputs, *outputs]):
        return None
    graph = onnx.helper.make_graph(
        [node],
        "probe",
        [values[i] for i in inputs],
        [values[o] for o in outputs],
        [inits[i] for i in node.input if i in inits],
    )
    probe = onnx.helper.make_model(graph, opset_imports=list(model.opset_import))
    probe.ir_version = model.ir_version
    return probe
