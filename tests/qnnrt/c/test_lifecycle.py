"""Process exit with QNN objects alive: never a crash (docs/qnn.md, process exit)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("exit_child.py")
ROOT = Path(__file__).resolve().parents[3]


def _start(bin_path: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(bin_path), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "READY", proc.communicate(timeout=30)
    return proc


def test_exit_without_closing_is_clean(bins):
    proc = _start(bins["kv_decode"].bin_path, "plain")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    assert "QnnBackend_free" in err  # the atexit hook freed it (debug log)


@pytest.mark.parametrize("mode", ["thread", "npu_worker"])
@pytest.mark.parametrize("attempt", range(3))
def test_sigterm_while_a_worker_is_inside_execute(bins, mode, attempt):
    proc = _start(bins["kv_decode"].bin_path, mode)
    time.sleep(0.05 * (attempt + 1))  # land at different points of a call
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"exit {proc.returncode}: {err[-2000:]}"
