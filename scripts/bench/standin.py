"""Stand-in graphs for the host-side benchmarks: an engine's full-size graph
I/O with next to no compute, so the engine's host work per step is timed on
buffers of the real sizes without a model (which the x86 simulator runs at
seconds per step).  Every input feeds an output, so no compiler drops one.

The ONNX pieces they are built of, and the compile of a set of them into the
graphs of a bundle (binaries for the simulator, their ONNX for the CPU
backend).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import onnx
from onnx import helper, numpy_helper

from daemon.sdk.bundles.manifest import GraphSpec

#: the opset every stand-in is written in (what the QNN EP compiles here)
OPSET: Final = 17


def vi(name: str, dtype: int, shape: Sequence[int]) -> onnx.ValueInfoProto:
    """A graph input or output of a static shape."""
    return helper.make_tensor_value_info(name, dtype, list(shape))


def i64(name: str, values: Sequence[int]) -> onnx.TensorProto:
    """An int64 initializer (shapes, slice bounds, repeats)."""
    return numpy_helper.from_array(np.array(values, np.int64), name)


def save(graph: onnx.GraphProto, path: Path, ir_version: int | None = None) -> Path:
    """``graph`` as a checked model at ``path`` (``ir_version``: pinned, else
    the onnx package's own)."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    if ir_version is not None:
        model.ir_version = ir_version
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def compile_graphs(
    root: Path, sources: Mapping[str, Path], cache_dir: Path | None = None
) -> dict[str, GraphSpec]:
    """Compile every ``key -> ONNX`` of ``sources`` into ``root/bins`` (through
    the content-keyed cache when ``cache_dir``) and add it to the bundle being
    written at ``root/bundle``."""
    from scripts.common import bundling
    from scripts.common.qnn_compile import compile_onnx

    graphs = {}
    for key, src in sources.items():
        c = compile_onnx(src, root / "bins", name=key, cache_dir=cache_dir)
        graphs[key] = bundling.add_graph(root / "bundle", key, c.bin_path, src)
    return graphs
