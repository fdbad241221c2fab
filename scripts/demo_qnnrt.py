"""Compile a small graph for HTP v73, show what the binary holds, run it on QNN."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import qnnrt
from qnnrt.__main__ import format_info
from scripts.qnn_compile import compile_onnx

WIDTH = 256
SEED = 0


def _model(path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)
    w = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["m"]),
            helper.make_node("Tanh", ["m"], ["y"]),
        ],
        "demo",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, WIDTH])],
        [numpy_helper.from_array(w, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.save(model, str(path))
    return path


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = _model(Path(tmp) / "demo.onnx")
        print("[1/3] compiling demo.onnx for HTP v73 (fp16) ...", flush=True)
        compiled = compile_onnx(onnx_path, tmp, target="simulator")
        print(f"[2/3] {compiled.bin_path.name} (QNN {compiled.qnn_sdk_version}):")
        print(format_info(qnnrt.read_binary_info(compiled.bin_path)))
        print("[3/3] running it on the HTP simulator ...", flush=True)
        x = np.random.default_rng(SEED).standard_normal((1, WIDTH)).astype(np.float32)
        with qnnrt.Backend() as backend:
            graph = backend.load(compiled.bin_path).graph()
            (y,) = graph.run({"x": x})
            timing = graph.last_timing
        ref = np.tanh(x @ _weights())
        print(
            f"max |qnn - numpy| = {np.abs(y - ref).max():.4f}, "
            f"graphExecute {timing.execute_s * 1e3:.2f} ms"
        )
    return 0


def _weights() -> np.ndarray:
    rng = np.random.default_rng(SEED)
    return (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)


if __name__ == "__main__":
    sys.exit(main())
