"""Export a torch module to a static fp32 ONNX graph for the HTP, and lint it.

The recipe measured in docs/qwen3.md, export findings: torch's
TorchScript exporter (dynamo=False, opset 17), then onnxruntime's BASIC fold so every
shape is a constant (hexvoice's graph specs reject dynamic dimensions), then `no_pow2`.
Graphs past protobuf's 2 GiB keep their weights in one external data file.
`fold_static` is the fold alone, for a graph that is not exported from torch
(GPT-SoVITS's g2pW body, cut out of upstream's ONNX file).
"""

from __future__ import annotations

import logging
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import onnx
import torch
from onnx import numpy_helper
from onnx.external_data_helper import uses_external_data
from torch import nn

_LOGGER = logging.getLogger(__name__)

#: LayerNormalization is one op from opset 17 (QNN EP maps it 1:1); docs/qwen3.md,
#: export findings
OPSET = 17
#: weights past this many bytes go to an external data file (protobuf's limit
#: is 2 GiB for the whole model; the margin covers folded constants and graph)
EXTERNAL_DATA_BYTES = 1 << 30
#: external data: tensors from this size on leave the protobuf (small constants
#: such as shapes stay inline, where the graph's readers expect them)
EXTERNAL_MIN_BYTES = 1024
DATA_SUFFIX = ".data"
#: protobuf's limit on one serialized model (a graph kept unfolded is one file)
PROTOBUF_BYTES = 1 << 31
#: the exponent `no_pow2` refuses (docs/qwen3.md, export findings:
#: Pow(Sin(x),2) wrong on HTP fp16)
_SQUARE = 2.0


_ONNX_DTYPES = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.INT32: "int32",
}


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class GraphSpec:
    name: str
    path: Path
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]


def graph_spec(name: str, path: Path) -> GraphSpec:
    """I/O of an exported graph in ONNX order; rejects dynamic dimensions."""
    model = onnx.load(str(path), load_external_data=False)

    def specs(values: Sequence[onnx.ValueInfoProto]) -> tuple[TensorSpec, ...]:
        out = []
        for v in values:
            t = v.type.tensor_type
            dims = tuple(
                d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim
            )
            if any(d <= 0 for d in dims):
                raise ValueError(f"{path}: {v.name} has a dynamic shape {dims}")
            out.append(
                TensorSpec(
                    v.name, _ONNX_DTYPES.get(t.elem_type, str(t.elem_type)), dims
                )
            )
        return tuple(out)

    return GraphSpec(
        name, Path(path), specs(model.graph.input), specs(model.graph.output)
    )


class Pow2Error(ValueError):
    """An exported graph squares with Pow (wrong on HTP fp16, docs/qwen3.md)."""


def no_pow2(onnx_path: str | Path) -> None:
    """Raise Pow2Error if the graph has a Pow whose exponent is the constant 2."""
    model = onnx.load(str(onnx_path), load_external_data=False)
    # An exponent is a scalar: inline, never in the external data.
    consts = {
        t.name: numpy_helper.to_array(t)
        for t in model.graph.initializer
        if not uses_external_data(t)
    }
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    consts[node.output[0]] = numpy_helper.to_array(attr.t)
    for node in model.graph.node:
        if node.op_type != "Pow" or len(node.input) < 2:
            continue
        exponent = consts.get(node.input[1])
        if exponent is not None and (exponent == _SQUARE).any():
            raise Pow2Error(
                f"{Path(onnx_path).name}: node {node.name!r} is Pow(x, 2); "
                "square as x*x instead (Pow(x, 2) is wrong on HTP fp16)"
            )


def export_static(
    module: nn.Module,
    args: tuple[torch.Tensor, ...],
    inputs: Sequence[str],
    outputs: Sequence[str],
    path: str | Path,
    external_data: bool | None = None,
    fold: bool = True,
) -> GraphSpec:
    """Export `module(*args)` to `path` (static shapes folded, no Pow(x, 2));
    the files appear under their names only when complete.

    `external_data` (None: when the weights pass EXTERNAL_DATA_BYTES) writes the
    weights to `<path>.data` next to `path`, which records that location: a
    protobuf holds at most 2 GiB, and full-size Qwen3-ASR decoder graphs hold
    about 2.4 GB of fp32 weights (28 layers and the 151,936-row head).

    `fold=False` keeps the tracer's graph as it is (still linted): onnxruntime's
    own later fusions (EXTENDED level, e.g. attention) fail on a BASIC-folded
    BERT or HuBERT ("Attempt to replace the existing tensor"), and the CPU
    backend loads graphs with every optimization on.  Such a graph is one
    protobuf (None then means no external data; True is refused)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    # Constants captured from parameters must not require grad (docs/qwen3.md, export
    # findings: "Cannot insert a Tensor that requires grad as a
    # constant").
    module = module.eval().requires_grad_(False)
    if not fold:
        _check_unfolded(module, external_data, path)
        external_data = False
    elif external_data is None:
        external_data = _weight_bytes(module) > EXTERNAL_DATA_BYTES
    data = path.with_name(path.name + DATA_SUFFIX)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        traced = Path(tmp) / "traced" / "traced.onnx"
        traced.parent.mkdir()
        with torch.no_grad(), warnings.catch_warnings():
            # Expected with this exporter on static graphs; they bury progress.
            warnings.filterwarnings("ignore", message=".*legacy TorchScript-based")
            warnings.filterwarnings("ignore", message="Constant folding - Only steps")
            # Past 2 GiB the exporter itself writes one file per weight beside it.
            torch.onnx.export(
                module,
                args,
                str(traced),
                dynamo=False,
                input_names=list(inputs),
                output_names=list(outputs),
                opset_version=OPSET,
                do_constant_folding=True,
            )
        part = Path(tmp) / path.name
        if fold:
            fold_static(traced, part, data.name if external_data else None)
        else:
            traced.replace(part)
        no_pow2(part)
        if external_data:
            (Path(tmp) / data.name).replace(data)
        else:
            data.unlink(missing_ok=True)  # a stale one from an earlier export
        part.replace(path)
    _LOGGER.info("exported %s in %.1f s", path.name, time.monotonic() - start)
    return graph_spec(path.stem, path)


def _weight_bytes(module: nn.Module) -> int:
    tensors = [*module.parameters(), *module.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors)


def _check_unfolded(module: nn.Module, external_data: bool | None, path: Path) -> None:
    """An unfolded graph is the tracer's single file: no external data."""
    if external_data:
        raise ValueError(f"{path.name}: external data needs fold=True")
    if _weight_bytes(module) >= PROTOBUF_BYTES:
        raise ValueError(
            f"{path.name}: weights past protobuf's 2 GiB need fold=True (external data)"
        )


def fold_static(src: Path, dst: Path, data_name: str | None = None) -> None:
    """onnxruntime's BASIC level (constant folding, redundancy elimination:
    plain ONNX ops) folds the shape arithmetic the tracer emits for sizes that
    are static here, writing `dst`; with `data_name`, the weights go to that
    file beside `dst`."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(dst)
    if data_name is not None:
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", data_name
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes",
            str(EXTERNAL_MIN_BYTES),
        )
    ort.InferenceSession(str(src), options, providers=["CPUExecutionProvider"])
    # The graph alone: the weights stay where onnxruntime wrote them.
    model = onnx.load(str(dst), load_external_data=False)
    # onnxruntime's optimiser declares all of its domains; keep those in use.
    used = {node.domain for node in model.graph.node} | {"", "ai.onnx"}
    keep = [o for o in model.opset_import if o.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    model.producer_name = "hexvoice scripts.common.build.onnx_export"
    onnx.save(model, str(dst))
    onnx.checker.check_model(str(dst))  # by path: the > 2 GiB form too
