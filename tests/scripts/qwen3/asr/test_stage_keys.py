"""Each stage of the ASR build is keyed by the code it imports (docs/builds.md,
keys): the slow stages (export, compile) do not depend on the gates or the
engine that drives them, the gates not on the exporter or the compiler, the
tables and the bundle on neither; the cached bundle's key covers them all."""

from __future__ import annotations

import pytest

from scripts.qwen3.asr import build
from tests.scripts.qwen3.common.stage_keys import code_files, stage_files

EXPORTER = {"scripts/common/build/onnx_export.py", "scripts/qwen3/asr/export.py"}
COMPILER = {"scripts/common/qnn_compile.py", "scripts/common/weight_sharing.py"}
GATES = {"scripts/qwen3/asr/gates.py", "scripts/qwen3/asr/pipeline/gating.py"}
#: the engine's code the gates drive the graphs with (the runners: the
#: bundle's verify asks the engine registry, which knows them too)
ENGINE = {"daemon/engines/qwen3/asr/decoder.py", "daemon/engines/qwen3/asr/encoder.py"}
RUNNERS = {"daemon/sdk/graphs.py"}


@pytest.fixture(scope="module")
def keyed() -> dict[str, set[str]]:
    """Each stage's code files, by stage name."""
    return stage_files(build.STAGES)


def test_every_stage_is_keyed(keyed):
    assert set(keyed) == {
        "export",
        "gates_cpu",
        "tables",
        "compile",
        "gates_sim",
        "bundle",
    }


def test_export_and_compile_do_not_depend_on_the_gates_or_the_engine(keyed):
    assert EXPORTER <= keyed["export"]
    assert not keyed["export"] & (GATES | ENGINE | RUNNERS | COMPILER)
    assert COMPILER <= keyed["compile"]
    assert not keyed["compile"] & (GATES | ENGINE | RUNNERS | EXPORTER)
    assert not any(f.startswith("daemon/engines/") for f in keyed["compile"])


def test_the_gates_depend_on_the_engine_not_on_the_exporter_or_compiler(keyed):
    for name in ("gates_cpu", "gates_sim"):
        assert (GATES | ENGINE | RUNNERS) <= keyed[name]
        assert not keyed[name] & (EXPORTER | COMPILER), name


def test_the_tables_and_the_bundle_depend_on_neither(keyed):
    assert not keyed["tables"] & (EXPORTER | COMPILER | GATES | ENGINE | RUNNERS)
    assert not keyed["bundle"] & (EXPORTER | GATES | ENGINE)
    assert "scripts/qwen3/common/bundle.py" in keyed["bundle"]


def test_the_cached_bundles_key_covers_every_stage(keyed):
    everything = code_files([build.__name__])
    assert set().union(*keyed.values()) <= everything
