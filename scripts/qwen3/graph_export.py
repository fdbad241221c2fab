"""Export a torch module to a static fp32 ONNX graph for the HTP, and lint it.

The recipe measured in shared/docs/qwen3.md §5: torch's TorchScript exporter
(dynamo=False, opset 17), then onnxruntime's BASIC fold so every shape is a
constant (scripts/common/onnx_surgery.fold; hexvoice's graph specs reject
dynamic dimensions), then `no_pow2`.
"""

from __future__ import annotations

import logging
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import onnx
import torch
from onnx import numpy_helper
from torch import nn

from scripts.common.onnx_surgery import fold
from scripts.gsv.export.graphs import GraphSpec, graph_spec

_LOGGER = logging.getLogger(__name__)

#: LayerNormalization is one op from opset 17 (QNN EP maps it 1:1); qwen3.md §5
OPSET = 17
#: the exponent `no_pow2` refuses (qwen3.md §5: Pow(Sin(x),2) wrong on HTP fp16)
_SQUARE = 2.0


class Pow2Error(ValueError):
    """An exported graph squares with Pow (wrong on HTP fp16, qwen3.md §5)."""


def no_pow2(onnx_path: str | Path) -> None:
    """Raise Pow2Error if the graph has a Pow whose exponent is the constant 2."""
    model = onnx.load(str(onnx_path), load_external_data=False)
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
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
) -> GraphSpec:
    """Export `module(*args)` to `path` (static shapes folded, no Pow(x, 2));
    the file appears under its name only when complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    # Constants captured from parameters must not require grad (qwen3.md §5:
    # "Cannot insert a Tensor that requires grad as a constant").
    module = module.eval().requires_grad_(False)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        traced = Path(tmp) / "traced.onnx"
        with torch.no_grad(), warnings.catch_warnings():
            # Expected with this exporter on static graphs; they bury progress.
            warnings.filterwarnings("ignore", message=".*legacy TorchScript-based")
            warnings.filterwarnings("ignore", message="Constant folding - Only steps")
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
        model = fold(onnx.load(str(traced)), Path(tmp))
        # onnxruntime's optimiser declares all of its domains; keep those in use.
        used = {node.domain for node in model.graph.node} | {"", "ai.onnx"}
        keep = [o for o in model.opset_import if o.domain in used]
        del model.opset_import[:]
        model.opset_import.extend(keep)
        model.producer_name = "hexvoice scripts.qwen3.graph_export"
        onnx.checker.check_model(model)
        part = Path(tmp) / "folded.onnx"
        onnx.save(model, str(part))
        no_pow2(part)
        part.replace(path)
    _LOGGER.info("exported %s in %.1f s", path.name, time.monotonic() - start)
    return graph_spec(path.stem, path)
