"""Suite-wide fixtures: one compile of every tiny graph per run, cached by content."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path

import pytest
from onnx import TensorProto

from scripts.qnn_compile import Compiled, compile_onnx, compile_shared
from tests.qnnrt import tiny_models as tm

_MODELS: dict[str, Callable[[Path], Path]] = {
    "matmul_tanh": tm.matmul_tanh,
    "multi_io": tm.multi_io,
    "qdq8": tm.qdq,
    "qdq16": lambda p: tm.qdq(p, TensorProto.UINT16),
    "kv_decode": tm.kv_decode,
}


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    on_board = platform.machine() == "aarch64" and os.path.exists("/dev/adsprpc-smd")
    skip = pytest.mark.skip(reason="needs a QCS8550 board")
    for item in items:
        if item.get_closest_marker("board") is not None and not on_board:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def qnn_cache(request: pytest.FixtureRequest) -> Path:
    """Compiled-binary cache (content-keyed; survives between local runs)."""
    return Path(request.config.cache.mkdir("qnn-bins"))


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
