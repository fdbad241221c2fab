"""One context binary, several graphs: each looked up by name, each its own weights."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qnnrt
from tests.conftest import BOARD_BUNDLE_ENV

ROOT = Path(__file__).resolve().parents[2]
FP16_ATOL = 2e-2  # fp16 HTP math vs fp32 numpy on O(1) activations
#: the board-only binary ``python -m tests.qnnrt.board_bundle DIR`` writes
SAME_WEIGHTS_BIN = "shared_same_weights.bin"


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("onnxruntime_qnn")
    from tests.qnnrt import tiny_models as tm

    return tm.twin_matmuls(tmp_path_factory.mktemp("twins"))


@pytest.mark.simulator
def test_each_graph_of_a_shared_binary_runs_with_its_own_weights(backend, twins):
    from tests.qnnrt import tiny_models as tm

    ctx = qnnrt.Context.open(backend, twins.bin_path)
    assert sorted(ctx.graphs) == sorted(twins.graphs)
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(1, 64)
    outs = []
    for name, (seed, act) in zip(twins.graphs, tm.TWINS, strict=True):
        graph = ctx.graph(name)
        assert [t.name for t in graph.inputs + graph.outputs] == ["x", "y"]
        (y,) = graph.run({"x": x})
        np.testing.assert_allclose(y, tm.twin_reference(x, seed, act), atol=FP16_ATOL)
        outs.append(y)
    assert np.abs(outs[0] - outs[1]).max() > 0.1  # two graphs, not one twice


def test_info_lists_every_graph_of_the_binary(twins):
    cmd = [sys.executable, "-m", "qnnrt", "info", str(twins.bin_path)]
    text = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert text.returncode == 0, text.stderr
    assert f"2 graph(s): {', '.join(twins.graphs)}" in text.stdout
    for name in twins.graphs:
        assert f"  graph {name}\n" in text.stdout
    js = subprocess.run(
        [*cmd, "--json"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert [g["name"] for g in json.loads(js.stdout)["graphs"]] == list(twins.graphs)


@pytest.mark.board
def test_a_weight_shared_binary_loads_on_the_board(backend):
    """Both graphs with the same ops and weights (the QNN EP de-duplicates them):
    the x86 simulator refuses such a context (1000); a board must load it."""
    path = Path(os.environ.get(BOARD_BUNDLE_ENV, "")) / SAME_WEIGHTS_BIN
    if not path.is_file():
        pytest.fail(f"{path}: make it with `python -m tests.qnnrt.board_bundle DIR`")
    ctx = qnnrt.Context.open(backend, path)
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(1, 64)
    first, second = (g.run({"x": x})[0] for g in ctx.graphs.values())
    np.testing.assert_allclose(first, second, atol=FP16_ATOL)
    assert np.abs(first).max() > 0.1
