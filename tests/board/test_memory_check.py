"""``qnn-memory``: the doctor reports the memory mode the service will use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from board.checks import OK, SKIP
from tests.qnnrt.cdsprpc_stub import build

REPO = Path(__file__).resolve().parents[2]


def test_simulator_without_libcdsprpc_reports_host_memory(run_check, simulator):
    (f,) = run_check("qnn-memory", simulator)
    assert f.level == OK
    assert f.message.startswith("host memory: QNN copies every input and output")
    assert "libcdsprpc.so: not found; libcdsprpc.so.1: not found" in f.message


def test_a_fake_tree_is_not_decided_here(run_check, qcs8550, board, board_env):
    (f,) = run_check("qnn-memory", qcs8550, root=board, env=board_env)
    assert f.level == SKIP  # the aarch64 fake libraries do not load on x86


def test_doctor_tries_registration_with_the_bundle(voice, tmp_path):
    # libcdsprpc (a stand-in compiled here) loads and allocates; QNN's answer to
    # memRegister at the first context decides, as in the service.
    build(tmp_path / "lib")
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path / "lib")}
    env.pop("QNN_LIB_DIR", None)
    p = subprocess.run(
        [sys.executable, "-m", "daemon.cli", "doctor", "--profile", "simulator"]
        + ["--bundle", str(voice), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    report = json.loads(p.stdout)
    (f,) = [f for f in report["findings"] if f["check"] == "qnn-memory"]
    assert f["level"] == "ok", f
    assert f["message"].startswith("host memory")
    assert "memRegister of a 4096-byte libcdsprpc.so buffer failed" in f["message"]
    assert "QNN_COMMON_ERROR_NOT_SUPPORTED (1000)" in f["message"]
