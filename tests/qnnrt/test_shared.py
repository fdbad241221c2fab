"""One context binary, several graphs: each looked up by name, each its own weights."""

from __future__ import annotations

import ctypes as C
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qnnrt
from qnnrt.binary import mapped_file
from qnnrt.c import _api as A
from tests.conftest import BOARD_BUNDLE_ENV

ROOT = Path(__file__).resolve().parents[2]
FP16_ATOL = 2e-2  # fp16 HTP math vs fp32 numpy on O(1) activations
#: the board-only binary ``python -m tests.qnnrt.board_bundle DIR`` writes
SAME_WEIGHTS_BIN = "shared_same_weights.bin"
#: ... and two static-shape buckets of one model: one weight-shared binary, and a
#: binary per bucket (the simulator target's layout), for bit-identity on the board
BUCKET_ROWS = (1, 8)
SHARED_BUCKETS_BIN = "shared_buckets.bin"
BUCKET_BIN = "bucket_{rows}.bin"
#: QnnContext_Config_t options (QnnContext.h) and HTP custom options
#: (QnnHtpContext.h, docs/qnn.md, config structs) tried at load time on the simulator
_CUSTOM, _BINARY_COMPATIBILITY, _DEFER_GRAPH_INIT, _ENABLE_GRAPHS = 0, 8, 9, 5
HTP_LOAD_CONFIGS = {
    "WEIGHT_SHARING_ENABLED": 1,
    "FILE_READ_MEMORY_BUDGET": 3,
    "DSP_MEMORY_PROFILING_ENABLED": 4,
    "PREPARE_ONLY": 7,
    "INIT_ACCELERATION": 8,
    "SKIP_VALIDATION_ON_BINARY_SECTION": 9,
    "SHARE_RESOURCES_OPTIMIZATION_TYPE": 10,
    "USE_EXTENDED_UDMA": 11,
    "LORA_WEIGHT_SHARING_ENABLED": 13,
}
NOT_SUPPORTED = 1000  # QNN_COMMON_ERROR_NOT_SUPPORTED
NOT_FINALIZED = 6023  # QNN_GRAPH_ERROR_GRAPH_NOT_FINALIZED


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


def _create(backend: qnnrt.Backend, path: Path, cfg: A.QnnContext_Config_t | None):
    """contextCreateFromBinary with one config (or none): (code, handle)."""
    cfgs = (
        None if cfg is None else (C.POINTER(A.QnnContext_Config_t) * 2)(C.pointer(cfg))
    )
    handle = A.Qnn_Handle_t()
    with mapped_file(path) as (addr, size):
        rc = backend.lib.core("contextCreateFromBinary")(
            backend.handle, backend.device, cfgs, addr, size, C.byref(handle), None
        )
    return rc & 0xFFFF, handle.value


@pytest.mark.simulator
def test_the_simulator_refuses_shared_weights_under_every_load_config_tried(
    backend, tmp_path
):
    """Why the simulator target keeps a binary per graph: any binary
    with a shared-weights section answers 1000, whatever the load config; with
    DEFER_GRAPH_INIT the context is made but never finalizes (1000 again)."""
    from tests.qnnrt import tiny_models as tm

    shared = tm.twin_matmuls(tmp_path, tm.SAME, name="same")
    assert qnnrt.read_binary_info(shared.bin_path).shares_weights
    keep = []
    configs: dict[str, A.QnnContext_Config_t | None] = {"none": None}
    for name, option in HTP_LOAD_CONFIGS.items():
        custom = A.QnnHtpContext_CustomConfig_t()
        custom.option = option
        custom.fileReadMemoryBudgetInMb = 1  # true / 1 MB / SEQ_WITHOUT_VA alike
        cfg = A.QnnContext_Config_t()
        cfg.option, cfg.customConfig = _CUSTOM, C.addressof(custom)
        configs[name] = cfg
        keep.append(custom)
    names = (C.c_char_p * 2)(shared.graphs[0].encode(), None)
    enable = A.QnnContext_Config_t()
    enable.option = _ENABLE_GRAPHS
    enable.enableGraphs = C.cast(names, C.POINTER(C.c_char_p))
    configs["ENABLE_GRAPHS (one graph)"] = enable
    permissive = A.QnnContext_Config_t()
    permissive.option, permissive.memoryLimitHint = _BINARY_COMPATIBILITY, 0
    configs["BINARY_COMPATIBILITY permissive"] = permissive
    answers = {
        name: _create(backend, shared.bin_path, cfg)[0] for name, cfg in configs.items()
    }
    assert answers == dict.fromkeys(configs, NOT_SUPPORTED)

    defer = A.QnnContext_Config_t()
    defer.option, defer.memoryLimitHint = _DEFER_GRAPH_INIT, 1
    rc, handle = _create(backend, shared.bin_path, defer)
    assert rc == 0
    graph = A.Qnn_Handle_t()
    rc = backend.lib.core("graphRetrieve")(
        handle, shared.graphs[0].encode(), C.byref(graph)
    )
    assert rc & 0xFFFF == NOT_FINALIZED
    assert backend.lib.core("contextFinalize")(handle, None) & 0xFFFF == NOT_SUPPORTED


@pytest.mark.simulator
def test_a_refused_shared_binary_says_why(backend, tmp_path):
    from tests.qnnrt import tiny_models as tm

    shared = tm.twin_matmuls(tmp_path, tm.SAME, name="same")
    with pytest.raises(qnnrt.QnnError, match="share weights: loads on a board"):
        qnnrt.Context.open(backend, shared.bin_path)


@pytest.mark.board
def test_weight_shared_buckets_give_bit_identical_outputs_on_the_board(backend):
    """The board target's layout computes exactly what the per-graph layout does."""
    where = Path(os.environ.get(BOARD_BUNDLE_ENV, ""))
    if not (where / SHARED_BUCKETS_BIN).is_file():
        pytest.fail(f"{where}: make it with `python -m tests.qnnrt.board_bundle DIR`")
    shared = qnnrt.Context.open(backend, where / SHARED_BUCKETS_BIN)
    assert shared.info.shares_weights
    by_rows = {g.inputs[0].shape[0]: g for g in shared.graphs.values()}
    assert sorted(by_rows) == list(BUCKET_ROWS)
    rng = np.random.default_rng(0)
    for rows in BUCKET_ROWS:
        alone = qnnrt.Context.open(backend, where / BUCKET_BIN.format(rows=rows))
        x = rng.standard_normal((rows, 64)).astype(np.float32)
        (want,) = alone.graph().run({"x": x})
        (got,) = by_rows[rows].run({"x": x})
        assert np.array_equal(got, want)
        assert np.abs(got).max() > 0.1
