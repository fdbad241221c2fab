"""HTP compile of the split graphs through the project's compile step, with blame.

scripts/common/qnn_compile.py builds one context binary per graph with CPU fallback
disabled, so a graph the HTP cannot take whole fails instead of silently
splitting. Its error does not say which node is at fault; `find_unsupported`
narrows it down by compiling each op kind alone as a one-node graph with the
shapes it has in the model.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import onnx

from scripts.common.qnn_compile import CompileError, compile_onnx, qnn_session

DEFAULT_TARGET = "qcs8550"


@dataclass(frozen=True)
class CompileResult:
    graph: str
    ok: bool
    seconds: float
    ctx_onnx: Path | None
    binary: Path | None
    binary_bytes: int
    error: str = ""


def compile_htp(
    model_path: Path,
    out_dir: Path,
    target: str = DEFAULT_TARGET,
    cache_dir: Path | None = None,
) -> CompileResult:
    """Compile one graph; a graph the HTP rejects gives ok=False naming op and node.

    `cache_dir`: content-keyed compile cache (scripts/common/qnn_compile.py), optional.
    """
    start = time.perf_counter()
    try:
        done = compile_onnx(model_path, out_dir, target=target, cache_dir=cache_dir)
    except CompileError as exc:
        culprit = find_unsupported(model_path, target)
        return CompileResult(
            model_path.stem,
            False,
            time.perf_counter() - start,
            None,
            None,
            0,
            f"{culprit}; {str(exc).strip()[:300]}",
        )
    size = done.bin_path.stat().st_size
    return CompileResult(
        model_path.stem, True, done.seconds, done.ctx_onnx_path, done.bin_path, size
    )


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
