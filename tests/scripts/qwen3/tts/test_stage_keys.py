"""Each stage of the Qwen3-TTS build is keyed by the code it imports
(docs/builds.md, keys): the slow stages (export, compile) do not depend on the
gates, the windows measurement or the engine and runtime the gates drive; the
windows measurement does not depend on the exporter, the compiler or the
gates; the gates not on the compiler; the tables not on the gates, the
measurement or the compiler; the cached bundle's key covers them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.common.build import compile as compiling
from scripts.common.build.code import closure
from scripts.common.build.stage import Stage
from scripts.qwen3.tts import build

ROOT = Path(__file__).resolve().parents[4]
TTS = "scripts/qwen3/tts"
EXPORTER = {
    "scripts/common/build/onnx_export.py",
    f"{TTS}/graphs/export.py",
    f"{TTS}/graphs/codec.py",
    f"{TTS}/graphs/speaker.py",
}
COMPILER = {"scripts/common/qnn_compile.py", "scripts/common/weight_sharing.py"}
GATES = {
    f"{TTS}/graphs/gates.py",
    f"{TTS}/graphs/codec_sim.py",
    f"{TTS}/graphs/speaker_gate.py",
    f"{TTS}/pipeline/trajectory.py",
    f"{TTS}/stages/gating.py",
}
#: the codec schedule's measurement, through the engine's own schedule
MEASURE = {f"{TTS}/codec_plan.py", f"{TTS}/windows.py"}
#: the engine and the runtime the gates drive the graphs with
ENGINE = {
    "daemon/engines/qwen3/tts/codec/stream.py",
    "daemon/engines/qwen3/tts/xvector.py",
    "daemon/sdk/graphs.py",
    "qnnrt/__init__.py",
}


def _files(modules: tuple[str, ...]) -> set[str]:
    return {str(p.relative_to(ROOT)) for p in closure(modules)}


@pytest.fixture(scope="module")
def keyed() -> dict[str, set[str]]:
    """Each stage's code files, by stage name."""
    stages = {s.name: s for s in build.STAGES if isinstance(s, Stage)}
    keyed = {name: _files(s.modules) for name, s in stages.items()}
    keyed["compile"] = _files((compiling.__name__,))  # each compile stage's
    return keyed


def test_every_stage_is_keyed(keyed):
    assert set(keyed) == {
        "windows",
        "export",
        "gates_cpu",
        "tables",
        "quant cp_step",
        "compile",
        "gates_sim",
        "bundle",
    }


def test_export_and_compile_do_not_depend_on_the_gates_or_the_engine(keyed):
    assert EXPORTER <= keyed["export"]
    assert not keyed["export"] & (GATES | MEASURE | ENGINE | COMPILER)
    assert COMPILER <= keyed["compile"]
    assert not keyed["compile"] & (GATES | MEASURE | EXPORTER)
    assert not any(f.startswith("daemon/engines/") for f in keyed["compile"])


def test_the_measurement_depends_on_the_engines_schedule_only(keyed):
    assert (MEASURE | {"daemon/engines/qwen3/tts/codec/stream.py"}) <= keyed["windows"]
    assert not keyed["windows"] & (EXPORTER | COMPILER | GATES)


def test_the_gates_depend_on_the_engine_not_on_the_compiler(keyed):
    for name in ("gates_cpu", "gates_sim"):
        assert (GATES | ENGINE) <= keyed[name], name
        assert not keyed[name] & COMPILER, name
    assert f"{TTS}/stages/gates_sim.py" not in keyed["gates_cpu"]
    assert f"{TTS}/stages/gates_cpu.py" not in keyed["gates_sim"]
    assert not keyed["quant cp_step"] & (COMPILER | MEASURE)


def test_the_tables_and_the_bundle_depend_on_neither(keyed):
    assert not keyed["tables"] & (GATES | MEASURE | ENGINE | COMPILER)
    assert not keyed["bundle"] & (EXPORTER | GATES | MEASURE)
    assert "scripts/qwen3/common/bundle.py" in keyed["bundle"]


def test_the_cached_bundles_key_covers_every_stage(keyed):
    everything = _files((build.__name__,))
    assert set().union(*keyed.values()) <= everything
    assert not any("/asr/" in f for f in keyed["export"] | keyed["tables"])
