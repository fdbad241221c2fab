"""count.py: exact MACs and bytes of tiny graphs built here."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from scripts.bench.latency_model.count import ShapeError, cost, graph_cost

F32 = TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    return onnx.shape_inference.infer_shapes(m)


def _vi(name, shape, t=F32):
    return helper.make_tensor_value_info(name, t, shape)


def _w(name, shape):
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def test_matmul_weight_and_attention():
    # x [2,5,8] @ W [8,3] -> [2,5,3]; then q [2,5,3] @ k^T [2,3,5] (attention)
    m = _model(
        [
            helper.make_node("MatMul", ["x", "W"], ["y"]),
            helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1]),
            helper.make_node("MatMul", ["y", "yt"], ["s"]),
        ],
        [_vi("x", [2, 5, 8])],
        [_vi("s", [2, 5, 5])],
        [_w("W", [8, 3])],
    )
    c = graph_cost(m, "mm")
    assert c.macs == 2 * 5 * 8 * 3 + 2 * 5 * 3 * 5
    assert c.attention_macs == 2 * 5 * 3 * 5
    assert c.conv_macs == 0
    assert c.weight_bytes == 8 * 3 * 2  # fp16
    assert c.input_bytes == 2 * 5 * 8 * 4 and c.output_bytes == 2 * 5 * 5 * 4


def test_gemm_trans_b():
    m = _model(
        [helper.make_node("Gemm", ["x", "W", "b"], ["y"], transB=1)],
        [_vi("x", [4, 6])],
        [_vi("y", [4, 7])],
        [_w("W", [7, 6]), _w("b", [7])],
    )
    c = graph_cost(m, "gemm")
    assert c.macs == 4 * 6 * 7
    assert c.weight_bytes == (7 * 6 + 7) * 2


def test_conv_grouped_dilated_strided():
    # Cin 8, Cout 6, groups 2, k 3, stride 2, dilation 2, pad 2 over 20 frames
    m = _model(
        [
            helper.make_node(
                "Conv",
                ["x", "W"],
                ["y"],
                group=2,
                strides=[2],
                dilations=[2],
                pads=[2, 2],
                kernel_shape=[3],
            )
        ],
        [_vi("x", [1, 8, 20])],
        [_vi("y", [1, 6, 10])],
        [_w("W", [6, 4, 3])],
    )
    c = graph_cost(m, "conv")
    assert c.macs == c.conv_macs == 1 * 6 * 10 * 4 * 3


def test_conv_transpose_upsampling():
    # HiFiGAN-style: Cin 8 -> Cout 4, k 16, stride 8, padding 4: 10 -> 80 frames
    m = _model(
        [
            helper.make_node(
                "ConvTranspose",
                ["x", "W", "b"],
                ["y"],
                strides=[8],
                pads=[4, 4],
                kernel_shape=[16],
            )
        ],
        [_vi("x", [1, 8, 10])],
        [_vi("y", [1, 4, 80])],
        [_w("W", [8, 4, 16]), _w("b", [4])],
    )
    c = graph_cost(m, "up")
    # every input element meets every kernel tap of every output channel
    assert c.macs == c.conv_macs == 8 * 10 * 4 * 16


def test_gather_counts_rows_read_and_kv_inputs():
    m = _model(
        [
            helper.make_node("Gather", ["table", "ids"], ["e"]),
            helper.make_node("Add", ["e", "k_cache"], ["y"]),
        ],
        [_vi("ids", [1, 3], TensorProto.INT64), _vi("k_cache", [1, 3, 4])],
        [_vi("y", [1, 3, 4])],
        [_w("table", [100, 4])],
    )
    c = graph_cost(m, "gather")
    assert c.weight_bytes == 3 * 4 * 2  # 3 rows of the 100
    assert c.kv_bytes == 1 * 3 * 4 * 4
    assert c.elementwise == 2 * 12  # Gather and Add outputs
    assert c.macs == 0


def test_unknown_shape_is_a_clear_error():
    m = _model(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        [_vi("x", ["n", 8])],
        [_vi("y", ["n", 3])],
        [_w("W", [8, 3])],
    )
    with pytest.raises(ShapeError, match="no static shape"):
        graph_cost(m, "dyn")


def test_cost_reads_a_file(tmp_path):
    m = _model(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        [_vi("x", [1, 8])],
        [_vi("y", [1, 3])],
        [_w("W", [8, 3])],
    )
    onnx.save(m, tmp_path / "lin.onnx")
    c = cost(tmp_path / "lin.onnx")
    assert (c.name, c.macs) == ("lin", 24)


def test_scaled_extrapolates_layers():
    m1 = _model(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        [_vi("x", [1, 8])],
        [_vi("y", [1, 8])],
        [_w("W", [8, 8])],
    )
    m2 = _model(
        [
            helper.make_node("MatMul", ["x", "W"], ["h"]),
            helper.make_node("MatMul", ["h", "V"], ["y"]),
        ],
        [_vi("x", [1, 8])],
        [_vi("y", [1, 8])],
        [_w("W", [8, 8]), _w("V", [8, 8])],
    )
    c1, c2 = graph_cost(m1, "a"), graph_cost(m2, "b")
    c5 = c2.scaled("five", c1, 4)
    assert c5.macs == 5 * 64 and c5.weight_bytes == 5 * 64 * 2
    assert c5.input_bytes == c1.input_bytes
