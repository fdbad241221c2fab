"""The GPT-SoVITS build resumes stage by stage: a second run resumes every
stage, a change reruns the stages it reaches only, and each stage keys on
the code it runs (docs/builds.md, keys)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from daemon.sdk.bundles.manifest import Bundle
from scripts.common.build.cache import locked
from scripts.common.build.code import closure
from scripts.common.build.run import STATE_FILE
from scripts.gptsovits import build
from scripts.gptsovits.stages.report import HEADER, graph_rows
from scripts.gptsovits.synthetic.build import LOCK, QNN_CACHE, VOICE, options
from scripts.gptsovits.synthetic.voice import voice_at

#: a resumed tiny build costs finding its inputs and hashing them, no stage's
#: work (measured: about 5 s; a stage that ran would add 10 s or more)
RESUMED_SECONDS = 30.0


def test_a_second_run_resumes_every_stage(built_voice: Path) -> None:
    with locked(built_voice.parent / LOCK):  # other sessions may share the dir
        start = time.monotonic()
        built = build.build(_options(built_voice / "source", built_voice))
        seconds = time.monotonic() - start
    assert built.run.ran == []
    state = json.loads((built_voice / "work" / STATE_FILE).read_text())
    assert set(built.run.skipped) == set(state)
    assert seconds < RESUMED_SECONDS
    rows, keys = graph_rows(built.run), set(Bundle.load(built.bundle).graphs)
    assert rows[0] == HEADER and len(rows) == 1 + len(keys)
    assert {row[0] for row in rows[1:]} == keys
    text = build.summary(built).splitlines()
    assert text[0].split() == ["stage", "status", "seconds"]
    assert text[-1].startswith(f"0 stage(s) ran, {len(built.run.skipped)} resumed")


def _options(source: Path, base: Path, **changed: object) -> build.BuildOptions:
    """The test voice's build in ``base`` (bundle/, work/) with the compile
    cache of the test voices (``changed``: other options)."""
    opts = options(voice_at(source), base / "bundle", base / "work", "simulator")
    return build.BuildOptions(**{**vars(opts), **changed})


def test_a_change_reruns_the_stages_it_reaches_only(
    built_voice: Path, source_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A build of its own: a new bundle place reruns the bundle only; another
    reference transcript the reference and the bundle."""
    src, base = source_copy, tmp_path / "voice"
    own = {"sim_gates": False, "qnn_cache": built_voice.parent / QNN_CACHE}
    first = build.build(_options(src, base, **own))
    assert first.run.skipped == [] and "bundle" in first.run.ran
    again = build.build(_options(src, base, **own))
    assert again.run.ran == []
    moved = _options(src, base, **own, out=tmp_path / "elsewhere")
    assert build.build(moved).run.ran == ["bundle"]
    assert Bundle.load(tmp_path / "elsewhere").voices[VOICE]["text"] == "小孩儿在玩儿."
    retold = _options(src, base, **own, ref_text="小孩儿在玩。")
    assert build.build(retold).run.ran == ["refs", "bundle"]
    assert Bundle.load(base / "bundle").voices[VOICE]["text"] == "小孩儿在玩。"
    err = capsys.readouterr().err
    assert "export_t2s: up to date, skipped" in err and "refs ..." in err


def _stage_code(name: str) -> set[str]:
    """The repository files the stage ``name``'s code key covers."""
    (stage,) = [s for s in build.stages() if s.name == name]
    root = Path(build.__file__).parents[2]
    return {str(p.relative_to(root)) for p in closure(stage.modules)}


def test_each_stage_keys_on_the_code_it_runs() -> None:
    """A change to a gate reruns the gates, not the export; one to the
    bundle writer, the bundle only (docs/builds.md, keys)."""
    gsv = "scripts/gptsovits/"
    export, gates = _stage_code("export_t2s"), _stage_code("gates_cpu")
    bundle, tables = _stage_code("bundle"), _stage_code("tables")
    assert f"{gsv}export/graphs.py" in export
    assert not _under(export, f"{gsv}verify/", f"{gsv}stages/gates")
    assert f"{gsv}verify/cpu.py" in gates and f"{gsv}export/graphs.py" not in gates
    assert f"{gsv}stages/bundle.py" in bundle and "scripts/common/bundling.py" in bundle
    assert not _under(bundle, f"{gsv}models/", f"{gsv}verify/")
    assert f"{gsv}export/cpu_tables.py" in tables
    assert not _under(tables, f"{gsv}verify/")
    assert f"{gsv}stages/bundle.py" not in export | gates | tables


def _under(files: set[str], *folders: str) -> set[str]:
    return {f for f in files if f.startswith(folders)}
