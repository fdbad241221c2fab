"""Resumable steps: skip when inputs are unchanged, redo when they change."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.common.steps import Steps, code_hash


def _run(work: Path, src: Path, out: Path, calls: list, code: str = "c1") -> Steps:
    steps = Steps(work, 1, code, log=lambda msg: None)

    def fn() -> dict:
        calls.append(1)
        out.write_text(src.read_text().upper())
        return {"n": len(calls)}

    result = steps.run("upper", {"src": src, "opt": 3}, [out], fn)
    assert result["n"] == len(calls)
    return steps


def test_skip_rerun_on_change(tmp_path: Path) -> None:
    src, out, calls = tmp_path / "in.txt", tmp_path / "out.txt", []
    src.write_text("a")
    assert _run(tmp_path / "w", src, out, calls).ran == ["upper"]
    assert _run(tmp_path / "w", src, out, calls).skipped == ["upper"]
    src.write_text("b")  # input content changed
    assert _run(tmp_path / "w", src, out, calls).ran == ["upper"]
    out.unlink()  # output gone
    assert _run(tmp_path / "w", src, out, calls).ran == ["upper"]
    assert _run(tmp_path / "w", src, out, calls, code="c2").ran == ["upper"]
    assert len(calls) == 4 and out.read_text() == "B"


def test_damaged_state_rebuilds(tmp_path: Path) -> None:
    src, out, calls = tmp_path / "in.txt", tmp_path / "out.txt", []
    src.write_text("a")
    _run(tmp_path / "w", src, out, calls)
    (tmp_path / "w" / "state.json").write_text("{not json")
    assert _run(tmp_path / "w", src, out, calls).ran == ["upper"]


def test_code_hash_refuses_a_root_that_is_gone(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert code_hash([tmp_path / "a.py"]) == code_hash([tmp_path / "a.py"])
    with pytest.raises(FileNotFoundError, match="moved.py does not exist"):
        code_hash([tmp_path / "a.py", tmp_path / "moved.py"])
