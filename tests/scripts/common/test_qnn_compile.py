"""The compiled-binary cache under parallel workers (pytest-xdist, two test
runs in one checkout): the first compile published stays, a second one of the
same key is dropped, and no staging dir is left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnxruntime_qnn")

from scripts.common.qnn_compile import _publish, compile_onnx, onnx_cache_key  # noqa: E402
from tests.qnnrt import tiny_models as tm  # noqa: E402


def _work(root: Path, text: str) -> Path:
    root.mkdir()
    (root / "g.bin").write_text(text)
    return root


def test_a_second_publish_of_one_key_keeps_the_first(tmp_path: Path) -> None:
    cache, hit = tmp_path / "cache", tmp_path / "cache" / "key"
    _publish(_work(tmp_path / "a", "first"), {"n": 1}, cache, hit)
    # a reader may be copying the first out: it is never replaced
    _publish(_work(tmp_path / "b", "second"), {"n": 2}, cache, hit)
    assert [p.name for p in cache.iterdir()] == ["key"]
    assert (hit / "g.bin").read_text() == "first"
    assert (hit / "meta.json").read_text() == '{"n": 1}'


def test_compile_publishes_once_and_then_hits(tmp_path: Path) -> None:
    onnx_path = tm.matmul_tanh(tmp_path / "g.onnx")
    cache = tmp_path / "cache"
    first = compile_onnx(onnx_path, tmp_path / "out1", cache_dir=cache)
    key = onnx_cache_key(onnx_path, "simulator")
    assert [p.name for p in cache.iterdir()] == [key]
    # compiles are not byte-identical (the binary carries build metadata): a
    # hit returns the cached one
    again = compile_onnx(onnx_path, tmp_path / "out2", cache_dir=cache)
    assert again.bin_path.read_bytes() == first.bin_path.read_bytes()
