"""standin.py: the ONNX pieces every stand-in graph is written with."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from scripts.bench import standin


def _graph() -> onnx.GraphProto:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    return helper.make_graph(
        nodes,
        "g",
        [standin.vi("x", TensorProto.FLOAT, (2, 3))],
        [standin.vi("y", TensorProto.FLOAT, [3, 2])],
        [standin.i64("shape", [3, 2])],
    )


def test_save_writes_a_checked_model_in_the_opset(tmp_path: Path) -> None:
    path = standin.save(_graph(), tmp_path / "sub" / "g.onnx")
    model = onnx.load(str(path))
    assert [(o.domain, o.version) for o in model.opset_import] == [("", standin.OPSET)]
    shape = numpy_helper.to_array(model.graph.initializer[0])
    assert shape.dtype.name == "int64" and shape.tolist() == [3, 2]
    dims = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert dims == [3, 2]


def test_save_pins_the_ir_version_and_refuses_a_broken_graph(tmp_path: Path) -> None:
    model = onnx.load(str(standin.save(_graph(), tmp_path / "g.onnx", ir_version=8)))
    assert model.ir_version == 8
    broken = _graph()
    broken.node[0].input[1] = "missing"
    with pytest.raises(onnx.checker.ValidationError):
        standin.save(broken, tmp_path / "broken.onnx")
