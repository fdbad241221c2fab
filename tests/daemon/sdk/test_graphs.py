"""The two graph backends behind one interface give the same answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.bundles.needs import expect
from daemon.sdk.graphs import GraphHost
from scripts.common import bundling


@pytest.fixture(scope="module")
def bundle(bins, onnx_dir, tmp_path_factory) -> Bundle:
    root = tmp_path_factory.mktemp("graphs_bundle")
    graphs = {
        key: bundling.add_graph(
            root, key, bins[name].bin_path, onnx_dir / f"{name}.onnx"
        )
        for key, name in (
            ("mm", "matmul_tanh"),
            ("kv", "kv_decode"),
            ("io", "multi_io"),
        )
    }
    return bundling.finish(
        root,
        engine="test",
        name="t",
        sample_rate=16000,
        languages=("en",),
        graphs=graphs,
    )


def test_backends_agree_by_name_and_index(bundle: Bundle):
    rng = np.random.default_rng(0)
    feeds = {
        "a": rng.standard_normal((3, 5)).astype(np.float32),
        "c": rng.standard_normal((2, 8)).astype(np.float16),
        "ids": np.array([[1, 2, 3, 4]], np.int32),
    }
    outs = {}
    for backend in ("qnn", "cpu"):
        host = GraphHost(backend)
        try:
            (runners,) = host.open([bundle])
            io = runners["io"]
            outs[backend] = io.run(feeds)
            assert io.stats.calls == 1 and io.stats.seconds > 0
            assert [t.name for t in io.outputs] == ["s", "emb", "p"]
        finally:
            host.close()
    for q, c in zip(outs["qnn"], outs["cpu"], strict=True):
        assert q.dtype == c.dtype
        np.testing.assert_allclose(
            q.astype(np.float32), c.astype(np.float32), atol=2e-2
        )


@pytest.mark.parametrize("backend", ["qnn", "cpu"])
def test_bind_and_execute_on_both_backends(bundle: Bundle, backend: str):
    host = GraphHost(backend)
    try:
        (runners,) = host.open([bundle])
        mm = runners["mm"]
        x = np.full((1, 64), 0.5, np.float32)
        y = np.zeros((1, 64), np.float32)
        mm.bind("x", x)
        mm.bind(0, y)
        mm.execute()
        first = y.copy()
        assert np.abs(first).max() > 0.05
        x[...] = 0
        mm.execute()
        assert np.abs(y).max() < 1e-3  # same output array, new contents
    finally:
        host.close()


def test_cpu_backend_needs_onnx(bins, tmp_path: Path):
    graphs = {"mm": bundling.add_graph(tmp_path, "mm", bins["matmul_tanh"].bin_path)}
    b = bundling.finish(
        tmp_path,
        engine="test",
        name="t",
        sample_rate=16000,
        languages=("en",),
        graphs=graphs,
    )
    host = GraphHost("cpu")
    with pytest.raises(BundleError, match="has no ONNX file"):
        host.open([b])


def test_unknown_backend():
    with pytest.raises(ValueError, match="expected one of"):
        GraphHost("gpu")


def test_two_bundles_share_one_group(bundle: Bundle):
    host = GraphHost("qnn")
    try:
        first, second = host.open([bundle, bundle])
        assert set(first) == set(second) == {"mm", "kv", "io"}
        assert first["mm"] is not second["mm"]
        assert len(host.group.contexts) == 6
        assert "standalone" in host.status
    finally:
        host.close()


def test_expect_names_graph_tensor_and_shape(bundle: Bundle):
    host = GraphHost("cpu")
    try:
        (runners,) = host.open([bundle])
        mm = runners["mm"]
        assert expect(mm, {"x": (1, 64), "y": None}) == {
            "x": np.dtype("float32"),
            "y": np.dtype("float32"),
        }
        with pytest.raises(
            BundleError, match=r"graph mm: 'x' is \[1, 64\], the engine uses \[1, 32\]"
        ):
            expect(mm, {"x": (1, 32)})
        with pytest.raises(BundleError, match="graph mm: no tensor 'z'"):
            expect(mm, {"z": None})
    finally:
        host.close()


def test_expect_takes_a_dynamic_dimension_for_any_size() -> None:
    """-1: an ONNX axis the CPU backend runs at any size (piper-vits)."""
    from daemon.sdk.bundles.manifest import TensorSpec

    class _Runner:
        key = "dyn"
        inputs = (TensorSpec("x", "float32", (1, 192, -1)),)
        outputs = ()

    assert expect(_Runner(), {"x": (1, 192, 96)}) == {"x": np.dtype("float32")}
    with pytest.raises(BundleError, match=r"'x' is \[1, 192, -1\], the engine uses"):
        expect(_Runner(), {"x": (1, 80, 96)})
    with pytest.raises(BundleError):
        expect(_Runner(), {"x": (1, 192)})


# --- GraphSpec(file, graph): one binary holding several graphs ---------------
@pytest.fixture(scope="module")
def twins_bundle(tmp_path_factory) -> Bundle:
    """Graphs ``mm`` and ``mm_sigmoid``: the two graphs (distinct weights, same
    I/O names) of ONE context binary, written by the bundle writer."""
    pytest.importorskip("onnxruntime_qnn")
    from tests.qnnrt import tiny_models as tm

    work = tmp_path_factory.mktemp("twins")
    twins = tm.twin_matmuls(work)
    root = tmp_path_factory.mktemp("twins_bundle")
    keys = ("mm", "mm_sigmoid")
    graphs = bundling.add_shared(
        root,
        "twins",
        twins.bin_path,
        dict(zip(keys, twins.graphs, strict=True)),
        {key: work / f"twin_matmuls_{i}.onnx" for i, key in enumerate(keys)},
    )
    bundling.finish(
        root,
        engine="test",
        name="twins",
        sample_rate=16000,
        languages=("en",),
        graphs=graphs,
    )
    return Bundle.load(root)  # as voice.yaml says it


def test_the_bundle_writer_names_each_graph_of_a_shared_binary(twins_bundle):
    specs = twins_bundle.graphs
    assert {g.file for g in specs.values()} == {"graphs/twins.bin"}
    names = [g.graph for g in specs.values()]
    assert all(names) and len(set(names)) == 2
    assert list(twins_bundle.binaries) == ["graphs/twins.bin"]


@pytest.mark.parametrize("backend", ["qnn", "cpu"])
def test_graphspec_opens_each_graph_of_one_binary(twins_bundle: Bundle, backend):
    from tests.qnnrt import tiny_models as tm

    host = GraphHost(backend)
    try:
        (runners,) = host.open([twins_bundle])
        if backend == "qnn":
            assert len(host.group.contexts) == 1  # the file is loaded once
        x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(1, 64)
        outs = {}
        for key, (seed, act) in zip(("mm", "mm_sigmoid"), tm.TWINS, strict=True):
            (outs[key],) = runners[key].run({"x": x})
            want = tm.twin_reference(x, seed, act)
            np.testing.assert_allclose(outs[key], want, atol=2e-2)
        assert np.abs(outs["mm"] - outs["mm_sigmoid"]).max() > 0.1
    finally:
        host.close()


def test_a_manifest_without_graph_names_opens_each_binarys_only_graph(
    bundle: Bundle,
):
    """Manifests written before graph names: each file's only graph, as before."""
    old = Bundle.from_dict(bundle.root, _without_graph_names(bundle.to_dict()))
    assert all(g.graph is None for g in old.graphs.values())
    host = GraphHost("qnn")
    try:
        (runners,) = host.open([old])
        (y,) = runners["mm"].run({"x": np.full((1, 64), 0.5, np.float32)})
        assert np.abs(y).max() > 0.05
    finally:
        host.close()


def test_a_graph_the_binary_lacks_is_a_bundle_error_naming_both(twins_bundle):
    data = twins_bundle.to_dict()
    data["graphs"]["mm"]["graph"] = "nope"
    wrong = Bundle.from_dict(twins_bundle.root, data)
    host = GraphHost("qnn")
    try:
        refused = "graph mm: twins.bin has no graph 'nope'"
        with pytest.raises(BundleError, match=refused):
            host.open([wrong])
    finally:
        host.close()


def _without_graph_names(data: dict) -> dict:
    for g in data["graphs"].values():
        g.pop("graph", None)
    return data
