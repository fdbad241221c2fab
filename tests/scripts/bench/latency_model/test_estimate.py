"""latency_model/estimate.py: the importable estimate() on a tiny decode-step graph."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from scripts.bench.latency_model.calibrate import board_model
from scripts.bench.latency_model.estimate import estimate, predict

F16, F32 = TensorProto.FLOAT16, TensorProto.FLOAT


def _decode(path, length: int = 64, d: int = 16):
    """q [1,1,d] . k_cache [1,L,d]^T -> scores (+ mask) -> . v_cache -> @ W."""
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Cast", ["k_cache"], ["k"], to=F32),
        helper.make_node("Cast", ["v_cache"], ["v"], to=F32),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "kt"], ["s"]),
        helper.make_node("Add", ["s", "mask"], ["sm"]),
        helper.make_node("MatMul", ["sm", "v"], ["a"]),
        helper.make_node("MatMul", ["a", "W"], ["y"]),
    ]
    w = numpy_helper.from_array(np.zeros((d, d), np.float32), "W")
    g = helper.make_graph(
        nodes, "dec",
        [vi("x", F32, [1, 1, d]), vi("k_cache", F16, [1, length, d]),
         vi("v_cache", F16, [1, length, d]), vi("mask", F32, [1, 1, length])],
        [vi("y", F32, [1, 1, d])], [w],
    )  # fmt: skip
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_estimate_matches_the_model(tmp_path):
    path = _decode(tmp_path / "dec.onnx")
    est = estimate(path)
    assert est.cost.macs == 64 * 16 * 2 + 16 * 16
    assert est.cost.kv_bytes == 2 * 64 * 16 * 2
    m = board_model("profiled")
    assert est.seconds == pytest.approx(m.seconds(est.cost.features()))
    assert est.ms == pytest.approx(est.seconds * 1e3)
    assert predict is estimate


def test_kv_len_scales_kv_reads_and_attention(tmp_path):
    at64 = estimate(_decode(tmp_path / "a.onnx", 64)).cost
    at32 = estimate(_decode(tmp_path / "b.onnx", 64), kv_len=32).cost
    real32 = estimate(_decode(tmp_path / "c.onnx", 32)).cost
    assert (at32.macs, at32.kv_bytes, at32.input_bytes) == (
        real32.macs, real32.kv_bytes, real32.input_bytes)  # fmt: skip
    assert at32.weight_bytes == at64.weight_bytes


def test_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such ONNX"):
        estimate(tmp_path / "missing.onnx")
    vi = helper.make_tensor_value_info
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "r",
                          [vi("x", F32, [1, 4])], [vi("y", F32, [1, 4])])  # fmt: skip
    onnx.save(helper.make_model(g), tmp_path / "relu.onnx")
    with pytest.raises(ValueError, match="mask"):
        estimate(tmp_path / "relu.onnx", kv_len=8)
