"""``python -m board.profile``: the service environment and install.sh variables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from board.profile import shell_variables
from daemon.targets.profile import (
    load_profile,
)

REPO = Path(__file__).resolve().parents[2]


def test_env_file_is_safe_to_source_and_matches_the_profile():
    p = load_profile("qcs8550")
    env = subprocess.run(
        [sys.executable, "-m", "board.profile", "qcs8550", "--env"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # A shell that sources the file gets exactly the profile's values (';' quoted).
    shown = subprocess.run(
        ["bash", "-c", 'set -a; . /dev/stdin; echo "$ADSP_LIBRARY_PATH|$QNN_LIB_DIR"'],
        input=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert shown == f"{p.adsp_value}|{p.qnn.lib_dir}"


def test_shell_variables_round_trip_through_bash():
    script = shell_variables(load_profile("qcs8550"))
    out = subprocess.run(
        ["bash", "-c", script + '\necho "${#HOST_LIBS[@]} ${DEVICE_NODES[1]}"'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "3 /dev/fastrpc-cdsp*"
