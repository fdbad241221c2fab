"""The build framework on a small real declaration: a package of stage
modules written to a temporary folder, so editing one stage's code is a real
edit of a real module, and the runner must find it from the imports."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scripts.common.build import code
from scripts.common.build.run import (
    STATE_FILE,
    DeclarationError,
    run_stages,
)
from scripts.common.build.stage import Stage

PKG = "hv_build_probe"
#: the stage modules: export writes a file; gates reads it (and imports a
#: helper module); bundle reads export's result only
SOURCES = {
    "__init__.py": "",
    "helper.py": "SCALE = 2\n",
    "export.py": (
        "from dataclasses import dataclass\n"
        "@dataclass(frozen=True)\n"
        "class Exported:\n"
        "    size: int\n"
        "def run(ctx, results):\n"
        "    ctx['log'].append('export')\n"
        "    ctx['out'].write_text('x' * ctx['n'])\n"
        "    return Exported(ctx['n'])\n"
    ),
    "gates.py": (
        "def run(ctx, results):\n"
        "    from hv_build_probe import helper\n"  # a function-level import
        "    ctx['log'].append('gates')\n"
        "    return {'value': results['export'].size * helper.SCALE}\n"
    ),
    "bundle.py": (
        "def run(ctx, results):\n    ctx['log'].append('bundle')\n    return None\n"
    ),
}


def _forget() -> None:
    for name in [m for m in sys.modules if m.split(".")[0] == PKG]:
        del sys.modules[name]


@pytest.fixture()
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # edits within one second must not run stale bytecode
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    root = tmp_path / "src"
    pkg = root / PKG
    pkg.mkdir(parents=True)
    for name, text in SOURCES.items():
        (pkg / name).write_text(text)
    sys.path.insert(0, str(root))
    code._source_root.cache_clear()
    try:
        yield pkg
    finally:
        sys.path.remove(str(root))
        _forget()
        code._source_root.cache_clear()


def _stages() -> list[Stage[Any]]:
    _forget()  # each build run imports the stage code as it now is
    export = importlib.import_module(f"{PKG}.export")
    gates = importlib.import_module(f"{PKG}.gates")
    bundle = importlib.import_module(f"{PKG}.bundle")
    return [
        Stage("export", export.run, export.Exported,
              inputs=lambda c: {"n": c["n"]}, outputs=lambda c: [c["out"]]),
        Stage("gates", gates.run, dict, after=("export",)),
        Stage("bundle", bundle.run, after=("export",)),
    ]  # fmt: skip


def _run(work: Path, n: int = 3) -> tuple[list[str], Any]:
    ctx = {"n": n, "out": work / "graph.onnx", "log": []}
    run = run_stages(_stages(), ctx, work, log=lambda _: None)
    return ctx["log"], run


def test_a_second_run_resumes_every_stage_with_its_typed_result(
    probe: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    ran, first = _run(work)
    assert ran == ["export", "gates", "bundle"]
    ran, second = _run(work)
    assert ran == [] and second.skipped == ["export", "gates", "bundle"]
    # the stored result comes back as its declared type
    assert type(second.results["export"]).__name__ == "Exported"
    assert second.results["export"].size == first.results["export"].size == 3
    assert second.results["gates"] == {"value": 6}
    state = json.loads((work / STATE_FILE).read_text())
    assert set(state) == {"export", "gates", "bundle"}


def test_a_change_to_a_gates_import_reruns_the_gates_only(
    probe: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    _run(work)
    (probe / "helper.py").write_text("SCALE = 5\n")
    ran, run = _run(work)
    assert ran == ["gates"]
    assert run.results["gates"] == {"value": 15}


def test_a_changed_input_reruns_its_stage_and_the_stages_reading_its_result(
    probe: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    _run(work)
    ran, _ = _run(work, n=4)
    assert ran == ["export", "gates", "bundle"]


def test_a_lost_output_reruns_its_stage_only_while_its_result_is_the_same(
    probe: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    _run(work)
    (work / "graph.onnx").unlink()
    ran, _ = _run(work)
    assert ran == ["export"]
    assert (work / "graph.onnx").read_text() == "xxx"


def test_a_change_to_the_export_code_reruns_what_reads_its_result(
    probe: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    _run(work)
    text = SOURCES["export.py"].replace("* ctx['n']", "* ctx['n'] * 2")
    text = text.replace("Exported(ctx['n'])", "Exported(ctx['n'] * 2)")
    (probe / "export.py").write_text(text)
    ran, run = _run(work)
    assert ran == ["export", "gates", "bundle"]
    assert run.results["gates"] == {"value": 12}


def test_a_damaged_state_file_costs_a_rebuild_not_a_crash(
    probe: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    _run(work)
    (work / STATE_FILE).write_text("{not json")
    ran, _ = _run(work)
    assert ran == ["export", "gates", "bundle"]


@dataclass(frozen=True)
class _Nothing:
    pass


def _nothing(ctx: Any, results: Any) -> _Nothing:
    return _Nothing()


def test_a_declaration_reading_a_later_stage_is_refused(tmp_path: Path) -> None:
    stages = [Stage("a", _nothing, _Nothing, after=("b",)), Stage("b", _nothing)]
    with pytest.raises(DeclarationError, match="'a' reads \\['b'\\]"):
        run_stages(stages, {}, tmp_path, log=lambda _: None)
    assert not (tmp_path / STATE_FILE).exists()


def test_two_stages_of_one_name_are_refused(tmp_path: Path) -> None:
    stages = [Stage("a", _nothing), Stage("a", _nothing)]
    with pytest.raises(DeclarationError, match="two stages are named 'a'"):
        run_stages(stages, {}, tmp_path, log=lambda _: None)


def test_the_code_key_follows_function_level_imports(probe: Path) -> None:
    files = {p.name for p in code.closure([f"{PKG}.gates"])}
    assert files == {"__init__.py", "gates.py", "helper.py"}
    assert {p.name for p in code.closure([f"{PKG}.bundle"])} == {
        "__init__.py", "bundle.py"
    }  # fmt: skip


def test_installed_packages_and_the_standard_library_are_not_project_code() -> None:
    assert code.module_file("numpy") is None
    assert code.module_file("json") is None
    assert code.module_file("scripts.common.build.code") == Path(code.__file__)


def test_an_unknown_module_is_a_clear_error() -> None:
    with pytest.raises(ModuleNotFoundError, match="not a module of this project"):
        code.closure(["scripts.no_such_module"])


@dataclass(frozen=True)
class _Count:
    n: int


def _member(i: int) -> Any:
    def run(ctx: Any, results: Any) -> _Count:
        ctx["log"].append(f"m{i}")
        return _Count(i)

    return run


def _group_stages(width: int) -> list[Any]:
    from scripts.common.build.stage import StageGroup

    def total(ctx: Any, results: Any) -> _Count:
        ctx["log"].append("total")
        return _Count(sum(r.n for r in results["members"].values()))

    return [
        StageGroup(
            "members",
            lambda ctx: [Stage(f"m{i}", _member(i), _Count) for i in range(width)],
        ),
        Stage("total", total, _Count, after=("members",)),
    ]


def test_a_group_of_stages_is_planned_when_reached_and_read_as_one(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    ctx: dict[str, Any] = {"log": []}
    run = run_stages(_group_stages(3), ctx, tmp_path, log=lines.append)
    assert ctx["log"] == ["m0", "m1", "m2", "total"]
    assert run.results["total"] == _Count(3)
    assert lines[0] == "[1/4] m0 ..."
    ctx["log"] = []
    again = run_stages(_group_stages(3), ctx, tmp_path, log=lambda _: None)
    assert ctx["log"] == [] and again.results["total"] == _Count(3)
    # one more member: it runs, and so does the stage reading the group
    run_stages(_group_stages(4), ctx, tmp_path, log=lambda _: None)
    assert ctx["log"] == ["m3", "total"]


def test_a_groups_expected_size_counts_in_the_progress_before_it_is_planned(
    tmp_path: Path,
) -> None:
    from scripts.common.build.stage import StageGroup

    def first(ctx: Any, results: Any) -> _Count:
        return _Count(0)

    group, total = _group_stages(3)
    expecting = StageGroup(group.name, group.make, expect=lambda ctx: 3)
    lines: list[str] = []
    stages = [Stage("first", first, _Count), expecting, total]
    run_stages(stages, {"log": []}, tmp_path, log=lines.append)
    assert lines[0] == "[1/5] first ..."
    assert lines[-1].startswith("[5/5] total: done in ")


def _reads_model(ctx: Any, results: Any) -> _Count:
    ctx["log"].append("read")
    return _Count(len(ctx["model"].read_bytes()))


def test_a_moved_folder_resumes_but_changed_content_reruns(tmp_path: Path) -> None:
    def run(base: Path) -> list[str]:
        ctx: dict[str, Any] = {"model": base / "model.bin", "log": []}
        stage = Stage("read", _reads_model, _Count, inputs=lambda c: {"m": c["model"]})
        run_stages([stage], ctx, base / "work", log=lambda _: None)
        return ctx["log"]

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "model.bin").write_bytes(b"abc")
    assert run(tmp_path / "a") == ["read"]
    (tmp_path / "a").rename(tmp_path / "b")
    assert run(tmp_path / "b") == []  # the same name and bytes elsewhere
    (tmp_path / "b" / "model.bin").write_bytes(b"abd")
    assert run(tmp_path / "b") == ["read"]
