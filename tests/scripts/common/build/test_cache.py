"""The content-keyed bundle cache prunes old builds, never one in use."""

from __future__ import annotations

import os
import time
from pathlib import Path

from scripts.common.build.cache import DONE, IN_USE_SECONDS, cached_build


def _build(out: Path, work: Path) -> str:
    out.mkdir(parents=True)
    (out / "voice.yaml").write_text("built\n")
    return "report"


def _age(base: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(base / DONE, (then, then))


def test_a_cached_build_is_reused_without_building(tmp_path: Path) -> None:
    first, report = cached_build(tmp_path, "a", _build)
    again, second = cached_build(tmp_path, "a", _build)
    assert (first, report, second) == (again, "report", None)


def test_builds_past_keep_are_pruned_only_once_unused(tmp_path: Path) -> None:
    old, _ = cached_build(tmp_path, "old", _build, keep=1)
    recent, _ = cached_build(tmp_path, "recent", _build, keep=1)
    _age(old.parent, IN_USE_SECONDS + 60)
    _age(recent.parent, IN_USE_SECONDS - 600)
    newest, _ = cached_build(tmp_path, "newest", _build, keep=1)
    # another run may still read "recent" (used within the window): it stays
    assert (recent / "voice.yaml").is_file() and (newest / "voice.yaml").is_file()
    assert not old.parent.exists()
