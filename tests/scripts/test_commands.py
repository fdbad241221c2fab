"""The build commands: one name per engine (``scripts/<verb>-<engine>``), and the
old names still working, with a note, for one release."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: old name -> the command it now is
ALIASES = {
    "build_voice": "build-gptsovits",
    "build_asr": "build-qwen3-asr",
    "build_tts_qwen3": "build-qwen3-tts",
    "make_test_voice": "tiny-gptsovits",
    "eval_voice": "eval-gptsovits",
}


def _help(name: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable}
    return subprocess.run(
        [str(REPO / "scripts" / name), "--help"],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_an_old_name_runs_the_new_command_with_a_note(old: str) -> None:
    new = ALIASES[old]
    before, after = _help(old), _help(new)
    assert after.returncode == 0, after.stderr
    assert after.stdout.startswith(f"usage: scripts/{new} ")
    assert before.returncode == 0, before.stderr
    assert before.stdout == after.stdout
    assert f"scripts/{old} is now scripts/{new}" in before.stderr
    assert "is now" not in after.stderr
