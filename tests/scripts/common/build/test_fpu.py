"""FTZ/DAZ: importing qwen-asr (its nagisa's fast-math DyNet) sets them, and
then the typed reader accepts 0 for ``gt=0``; keep_subnormals puts the FPU
back, and the build runner does after each stage.  Each test runs in a fresh
interpreter: the import's side effect happens once per process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_qwen_asr_flushes_and_keep_subnormals_restores_the_reader() -> None:
    pytest.importorskip("qwen_asr")
    out = run(
        """
        from typing import Annotated
        import msgspec
        from daemon.config.reader import ReadError, read
        from scripts.common.build.fpu import flushes_subnormals, keep_subnormals

        T = dict[str, Annotated[float, msgspec.Meta(gt=0)]]
        def zero_refused():
            try:
                read({"x": 0.0}, T, where="t")
            except ReadError:
                return True
            return False

        before = zero_refused()
        import qwen_asr  # noqa: F401
        print(before, flushes_subnormals(), zero_refused(), keep_subnormals(),
              flushes_subnormals(), zero_refused(), keep_subnormals())
        """
    )
    # refused; flushing after the import and 0 accepted; reset; refused again
    assert out == "True True False True False True False"


def flushing_stage(ctx: object, results: object) -> None:
    """A stage that leaves FTZ/DAZ on, as one importing qwen-asr does."""
    import torch

    torch.set_flush_denormal(True)


def test_the_build_runner_restores_the_fpu_after_a_stage(tmp_path: Path) -> None:
    out = run(
        f"""
        from scripts.common.build.run import run_stages
        from scripts.common.build.stage import Stage
        from scripts.common.build.fpu import flushes_subnormals
        from tests.scripts.common.build.test_fpu import flushing_stage

        stage = Stage("flush", flushing_stage)
        run_stages([stage], None, {str(tmp_path)!r}, log=lambda m: None)
        print(flushes_subnormals())
        """
    )
    assert out == "False"
