from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from onnx import TensorProto

import qnnrt
from scripts.qnn_compile import Compiled, compile_onnx, compile_shared

from . import tiny_models as tm

_MODELS: dict[str, Callable[[Path], Path]] = {
    "matmul_tanh": tm.matmul_tanh,
    "multi_io": tm.multi_io,
    "qdq8": tm.qdq,
    "qdq16": lambda p: tm.qdq(p, TensorProto.UINT16),
    "kv_decode": tm.kv_decode,
}


@pytest.fixture(scope="session")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("onnx")
    for name, build in _MODELS.items():
        build(d / f"{name}.onnx")
    return d


@pytest.fixture(scope="session")
def bins(
    onnx_dir: Path, qnn_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Compiled]:
    out = tmp_path_factory.mktemp("bins")
    return {
        name: compile_onnx(onnx_dir / f"{name}.onnx", out, cache_dir=qnn_cache)
        for name in _MODELS
    }


@pytest.fixture(scope="session")
def two_graph_bin(onnx_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_shared(
        [onnx_dir / "matmul_tanh.onnx", onnx_dir / "multi_io.onnx"],
        tmp_path_factory.mktemp("shared"),
        name="two_graphs",
    )


@pytest.fixture
def backend() -> Iterator[qnnrt.Backend]:
    with qnnrt.Backend() as be:
        yield be
