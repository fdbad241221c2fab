"""Suite-wide fixtures: one compile of every tiny graph per run, cached by content."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from scripts.common.qnn_compile import Compiled

#: Fixture plugins of model families (session fixtures shared across test dirs).
pytest_plugins = ["tests.qwen3_fixtures", "tests.qwen3_bundles"]

#: The tiny graphs every QNN test compiles (tests/qnnrt/tiny_models.py).
_MODELS: tuple[str, ...] = ("matmul_tanh", "multi_io", "qdq8", "qdq16", "kv_decode")


def build_model(name: str, path: Path) -> Path:
    """Write tiny model ``name`` as ONNX to ``path``.

    onnx is imported here, not at module level: a board run (``-m board``) has
    no onnx and needs none, but collects this file."""
    from onnx import TensorProto

    from tests.qnnrt import tiny_models as tm

    builders: dict[str, Callable[[Path], Path]] = {
        "matmul_tanh": tm.matmul_tanh,
        "multi_io": tm.multi_io,
        "qdq8": tm.qdq,
        "qdq16": lambda p: tm.qdq(p, TensorProto.UINT16),
        "kv_decode": tm.kv_decode,
    }
    return builders[name](path)


#: Board runs take the tiny binaries prebuilt on x86 (the board has no QNN
#: compiler): a directory of ``<name>.bin`` made by
#: ``python -m tests.qnnrt.board_bundle DIR``.
BOARD_BUNDLE_ENV = "HEXVOICE_BOARD_BUNDLE"
#: FastRPC device nodes: Ubuntu/QLI images, and upstream fastrpc / Debian images
#: (daemon/targets/qcs8550.yaml).
FASTRPC_NODES = ("adsprpc-smd", "fastrpc-*")


def on_board(dev: Path = Path("/dev"), machine: str | None = None) -> bool:
    """An aarch64 machine with a FastRPC device node."""
    if (machine or platform.machine()) != "aarch64":
        return False
    return any(any(dev.glob(pattern)) for pattern in FASTRPC_NODES)


def on_simulator() -> bool:
    """The x86_64 HTP simulator from the onnxruntime-qnn wheel is here."""
    import qnnrt

    return platform.machine() == "x86_64" and qnnrt.simulator_lib_dir() is not None


def board_binaries(environ: Mapping[str, str] = os.environ) -> dict[str, Path]:
    """The prebuilt tiny binaries named by $HEXVOICE_BOARD_BUNDLE, by model name."""
    where = environ.get(BOARD_BUNDLE_ENV)
    if not where:
        raise LookupError(
            f"board tests need ${BOARD_BUNDLE_ENV}: the directory made on x86 by "
            f"`python -m tests.qnnrt.board_bundle DIR`"
        )
    paths = {name: Path(where) / f"{name}.bin" for name in _MODELS}
    missing = sorted(str(p) for p in paths.values() if not p.is_file())
    if missing:
        raise LookupError(f"${BOARD_BUNDLE_ENV}: missing {', '.join(missing)}")
    return paths


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    board, sim = on_board(), on_simulator()
    skip_board = pytest.mark.skip(reason="needs a QCS8550 board")
    skip_sim = pytest.mark.skip(reason="asserts the x86 HTP simulator's answers")
    for item in items:
        if item.get_closest_marker("board") is not None and not board:
            item.add_marker(skip_board)
        if item.get_closest_marker("simulator") is not None and not sim:
            item.add_marker(skip_sim)


def pytest_collection_finish(session: pytest.Session) -> None:
    from scripts.common.build.fpu import keep_subnormals

    keep_subnormals()  # a test module's import may have loaded qwen-asr


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: object) -> Iterator[None]:
    """After a test that turned FTZ/DAZ on (its first import of qwen-asr),
    the flags go back off, so no later test runs with subnormals flushed."""
    yield
    from scripts.common.build.fpu import keep_subnormals

    keep_subnormals()


@pytest.fixture(scope="session")
def board_bins() -> dict[str, Path]:
    """Context binaries for board tests (never compiled on the board)."""
    try:
        return board_binaries()
    except LookupError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def qnn_cache(request: pytest.FixtureRequest) -> Path:
    """Compiled-binary cache (content-keyed; survives between local runs)."""
    return Path(request.config.cache.mkdir("qnn-bins"))


#: pytest's cache dir of the GPT-SoVITS test voices (the builds' bundle cache,
#: scripts/common/build/cache.py: one ``<key>/`` per variant and code)
GSV_VOICES = "gsv-voices"


@pytest.fixture(scope="session")
def gsv_voice(request: pytest.FixtureRequest) -> Path:
    """The ``<key>/`` dir of ``scripts/tiny-gptsovits``: the GPT-SoVITS test
    voice's ``bundle/``, ``source/`` and ``work/``, built by the real build
    once per machine (content-keyed, cached)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime_qnn")
    from scripts.gptsovits.synthetic.build import make_test_voice

    root = Path(request.config.cache.mkdir(GSV_VOICES))
    return make_test_voice(root, sim_gates=False).parent


@pytest.fixture(scope="session")
def gsv_clone_voice(request: pytest.FixtureRequest) -> Path:
    """The ``<key>/`` dir of ``scripts/tiny-gptsovits --zero-shot``: the test
    voice with the four reference graphs (it clones), built once per machine
    and cached by content like ``gsv_voice``."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("onnxruntime_qnn")
    from scripts.gptsovits.synthetic.build import make_test_voice

    root = Path(request.config.cache.mkdir(GSV_VOICES))
    return make_test_voice(root, sim_gates=False, zero_shot=True).parent


@pytest.fixture(scope="session")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("onnx")
    for name in _MODELS:
        build_model(name, d / f"{name}.onnx")
    return d


@pytest.fixture(scope="session")
def bins(
    onnx_dir: Path, qnn_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Compiled]:
    from scripts.common.qnn_compile import compile_onnx

    out = tmp_path_factory.mktemp("bins")
    return {
        name: compile_onnx(onnx_dir / f"{name}.onnx", out, cache_dir=qnn_cache)
        for name in _MODELS
    }


@pytest.fixture(scope="session")
def two_graph_bin(onnx_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scripts.common.qnn_shared import compile_shared

    return compile_shared(
        [onnx_dir / "matmul_tanh.onnx", onnx_dir / "multi_io.onnx"],
        tmp_path_factory.mktemp("shared"),
        name="two_graphs",
    ).bin_path
