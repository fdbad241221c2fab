"""Validation before any pointer reaches C: every bad array is a clear error."""

from __future__ import annotations

import numpy as np
import pytest

import qnnrt
from qnnrt.c import _api as A
from qnnrt.memory.tensor import Quantization, TensorInfo, check_array, require_supported

X = np.ones((1, 64), np.float32)


@pytest.fixture
def graph(backend, bins):
    return qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path).graph()


def _assert_still_works(graph) -> None:
    assert graph.run({"x": X})[0].shape == (1, 64)


def test_missing_input_lists_expected_names(graph):
    with pytest.raises(
        ValueError, match=r"missing input\(s\) \['x'\]; expected \['x'\]"
    ):
        graph.run({})
    _assert_still_works(graph)


def test_misnamed_input_lists_expected_names(graph):
    with pytest.raises(
        ValueError, match=r"unknown input\(s\) \['X'\]; expected \['x'\]"
    ):
        graph.run({"X": X})
    with pytest.raises(ValueError, match="unknown input"):
        graph.run({"x": X, "extra": X})
    _assert_still_works(graph)


@pytest.mark.parametrize(
    "array,error,match",
    [
        (
            np.ones((1, 63), np.float32),
            ValueError,
            r"shape \(1, 63\), expected \(1, 64\)",
        ),
        (np.ones((64,), np.float32), ValueError, "shape"),
        (np.ones((1, 64), np.float64), TypeError, "dtype float64, expected float32"),
        (np.ones((1, 64), np.float16), TypeError, "dtype float16"),
        (np.ones((1, 64), np.int64), TypeError, "no 64-bit integers"),
        (np.ones((64, 2), np.float32).T[:1], ValueError, "C-contiguous"),
        ([[1.0] * 64], TypeError, "expected a numpy array"),
    ],
)
def test_bad_arrays_are_refused_before_c(graph, array, error, match):
    with pytest.raises(error, match=match):
        graph.run({"x": array})
    with pytest.raises(error, match=match):
        graph.bind("x", array)
    assert graph.bound("x") is None
    _assert_still_works(graph)


def test_read_only_output_cannot_be_bound(graph):
    y = np.empty((1, 64), np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        graph.bind(0, y)


def test_execute_needs_everything_bound(graph):
    graph.bind("x", X.copy())
    with pytest.raises(ValueError, match=r"unbound: \['output 0 \(y\)'\]"):
        graph.execute()
    graph.unbind("x")
    with pytest.raises(ValueError, match="unbound"):
        graph.execute()


def test_unknown_bind_keys(graph):
    with pytest.raises(KeyError, match="no tensor 'nope'"):
        graph.bind("nope", X)
    with pytest.raises(IndexError, match="no index 3"):
        graph.bind(3, X)


def test_int64_tensor_in_a_binary_is_refused_clearly():
    info = TensorInfo("ids", 1, A.QNN_DATATYPE_INT_64, (1, 4))
    with pytest.raises(TypeError, match="no 64-bit integers: re-export"):
        require_supported(info, "g")


def test_per_axis_quantization_is_refused_clearly():
    info = TensorInfo(
        "w", 1, A.QNN_DATATYPE_UFIXED_POINT_8, (4,), None, "AXIS_SCALE_OFFSET"
    )
    with pytest.raises(TypeError, match="only scalar scale/offset"):
        require_supported(info, "g")


def test_quantization_round_trip_uses_negative_zero_point():
    q = Quantization(scale=0.5, offset=-128)
    x = np.array([-64.0, 0.0, 0.5, 63.5, 1000.0], np.float32)
    stored = q.quantize(x, np.dtype(np.uint8))
    np.testing.assert_array_equal(stored, [0, 128, 129, 255, 255])
    np.testing.assert_array_equal(q.dequantize(stored), [-64.0, 0.0, 0.5, 63.5, 63.5])


def test_check_array_returns_the_same_object():
    info = TensorInfo("x", 1, A.QNN_DATATYPE_FLOAT_32, (1, 64))
    assert check_array(info, X, what="input") is X
