"""Graphs with external data (models past 2 GB): the data file is found, keys the
compile cache, travels into the bundle beside its graph, is hashed there, and
the bundle's CPU graph loads from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import verify_bundle
from scripts.common import bundling
from scripts.common.onnx_data import external_files, model_files
from scripts.common.qnn_compile import onnx_cache_key
from tests.engine_site import TONE_ENGINE, engine_site

onnx = pytest.importorskip("onnx")


@pytest.fixture(autouse=True)
def tone_engine(tmp_path_factory, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(engine_site(tmp_path_factory.mktemp("site"))))


def _external(src: Path, dest: Path) -> Path:
    """``src`` saved as ``dest`` with every tensor in ``<dest>.data``."""
    model = onnx.load(str(src))
    dest.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(dest), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=f"{dest.name}.data",
                    size_threshold=0)  # fmt: skip
    return dest


def test_the_data_file_is_found_and_keys_the_compile_cache(onnx_dir, tmp_path):
    src = onnx_dir / "matmul_tanh.onnx"
    graph = _external(src, tmp_path / "a" / "mm.onnx")
    assert external_files(src) == [] and model_files(src) == [src]
    assert external_files(graph) == [tmp_path / "a" / "mm.onnx.data"]
    before = onnx_cache_key(graph, "simulator")
    data = tmp_path / "a" / "mm.onnx.data"
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 1
    data.write_bytes(bytes(raw))
    assert onnx_cache_key(graph, "simulator") != before
    data.unlink()
    with pytest.raises(ValueError, match="external data file .* is missing"):
        external_files(graph)


def test_a_bundle_carries_and_hashes_the_data(onnx_dir, bins, tmp_path):
    graph = _external(onnx_dir / "matmul_tanh.onnx", tmp_path / "work" / "mm.onnx")
    root = tmp_path / "bundle"
    spec = bundling.add_graph(root, "mm", bins["matmul_tanh"].bin_path, graph)
    bundle = bundling.finish(root, engine=TONE_ENGINE, name="t", sample_rate=16000,
                             languages=("en",), graphs={"mm": spec},
                             target="simulator")  # fmt: skip
    assert (root / "onnx" / "mm.onnx.data").is_file()
    assert "onnx/mm.onnx.data" in bundle.files
    assert verify_bundle(Bundle.load(root)) == []

    from daemon.sdk.graphs import GraphHost

    host = GraphHost("cpu")
    try:
        (runners,) = host.open([Bundle.load(root)])
        x = np.ones((1, 64), np.float32)
        (y,) = runners["mm"].run({"x": x})
        assert y.shape == (1, 64) and np.isfinite(y).all()
    finally:
        host.close()
    copy = Path(shutil.copytree(root, tmp_path / "copy"))
    data = copy / "onnx" / "mm.onnx.data"
    raw = bytearray(data.read_bytes())
    raw[0] ^= 1
    data.write_bytes(bytes(raw))
    problems = verify_bundle(Bundle.load(copy))
    assert problems == ["onnx/mm.onnx.data: sha256 mismatch (file changed or "
                        "corrupted)"]  # fmt: skip
