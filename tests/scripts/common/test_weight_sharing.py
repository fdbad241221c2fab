"""Weight sharing by target: the board gets one binary per group of graphs with the
same weights, the simulator one per graph; both from the same ONNX graphs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.common import weight_sharing as ws
from scripts.common.weight_sharing import Unit
from tests.qnnrt.tiny_models import matmul_tanh

ROOT = Path(__file__).resolve().parents[3]
N = 256  # W is N x N: 128 KiB in fp16, far above the binaries' fixed overhead
BUCKETS = (1, 8)  # the static row counts of one model's two "buckets"
FP16_BYTES = 2


def _sources(tmp: Path) -> dict[str, Path]:
    """Two buckets of one model (same W, other static shape) and another model."""
    out = {f"a{r}": matmul_tanh(tmp / f"a{r}.onnx", n=N, rows=r) for r in BUCKETS}
    out["b"] = matmul_tanh(tmp / "b.onnx", n=N, seed=2)
    return out


def test_graphs_with_the_same_weights_group_whatever_their_static_shape(
    tmp_path: Path,
) -> None:
    assert ws.weight_groups(_sources(tmp_path)) == [("a1", "a8"), ("b",)]


def test_the_target_profile_decides_the_layout(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    assert ws.shares_weights("qcs8550") and not ws.shares_weights("simulator")
    assert ws.plan(sources, "simulator") == tuple(Unit(k, (k,)) for k in sources)
    assert ws.plan(sources, "qcs8550") == (
        Unit("shared_a1", ("a1", "a8")),
        Unit("b", ("b",)),
    )


def _info(path: Path) -> dict:
    cmd = [sys.executable, "-m", "qnnrt", "info", "--json", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _io(graph: dict) -> list:
    return [
        (t["name"], t["dtype"], t["shape"]) for t in graph["inputs"] + graph["outputs"]
    ]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, qnn_cache: Path) -> dict:
    """Both layouts of the two buckets for the board target."""
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.qnn_compile import compile_onnx

    tmp = tmp_path_factory.mktemp("sharing")
    sources = {k: p for k, p in _sources(tmp).items() if k != "b"}
    (unit,) = ws.plan(sources, "qcs8550")
    shared = ws.compile_unit(unit, sources, tmp / "bins", "qcs8550", qnn_cache)
    singles = {
        k: compile_onnx(p, tmp / "one", name=k, target="qcs8550", cache_dir=qnn_cache)
        for k, p in sources.items()
    }
    return {
        "sources": sources,
        "unit": unit,
        "result": shared,
        "bin": tmp / "bins" / f"{unit.name}.bin",
        "singles": {k: c.bin_path for k, c in singles.items()},
    }


def test_qnnrt_info_lists_every_graph_with_the_io_of_the_unshared_build(
    compiled: dict,
) -> None:
    shared = _info(compiled["bin"])
    by_name = {g["name"]: g for g in shared["graphs"]}
    assert sorted(by_name) == sorted(compiled["result"]["graphs"].values())
    for key, graph in compiled["result"]["graphs"].items():
        (alone,) = _info(compiled["singles"][key])["graphs"]
        assert _io(by_name[graph]) == _io(alone)
        assert by_name[graph]["shared_weights_bytes"] >= N * N * FP16_BYTES
        assert not alone["shared_weights_bytes"]


def test_the_shared_binary_drops_one_weight_copy(compiled: dict) -> None:
    before = sum(p.stat().st_size for p in compiled["singles"].values())
    after = compiled["bin"].stat().st_size
    assert before - after >= N * N * FP16_BYTES, (before, after)


def test_the_bundle_names_one_binary_for_both_graphs_and_verifies(
    compiled: dict, tmp_path: Path
) -> None:
    from daemon.sdk.bundles.manifest import Bundle
    from daemon.sdk.verify import engine_problems, verify_bundle
    from scripts.common import bundling

    results = {compiled["unit"].name: compiled["result"]}
    placed = ws.placements(results, compiled["bin"].parent)
    graphs = bundling.add_placed(tmp_path, placed, compiled["sources"])
    bundling.finish(
        tmp_path, engine="tone", name="t", sample_rate=16000, languages=("en",),
        graphs=graphs, target="qcs8550",
    )  # fmt: skip
    bundle = Bundle.load(tmp_path)
    assert {g.file for g in bundle.graphs.values()} == {"graphs/shared_a1.bin"}
    assert sorted(p.name for p in (tmp_path / "graphs").iterdir()) == ["shared_a1.bin"]
    # hashes, each graph's I/O in its binary, the binaries' HTP: all sound (the
    # made-up engine's own checks aside)
    no_engine = engine_problems(bundle, skip=set())
    assert [p for p in verify_bundle(bundle) if p not in no_engine] == []


def test_a_cached_shared_compile_returns_the_same_binary(
    compiled: dict, qnn_cache: Path, tmp_path: Path
) -> None:
    from scripts.common.qnn_shared import compile_shared

    paths = list(compiled["sources"].values())
    again = compile_shared(
        paths, tmp_path, name="x", target="qcs8550", cache_dir=qnn_cache
    )
    assert again.graphs == tuple(compiled["result"]["graphs"].values())
    assert again.bin_path.read_bytes() == compiled["bin"].read_bytes()
