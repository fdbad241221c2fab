"""``hexvoice doctor`` as a real subprocess: reports, exit codes, --ignore, --json."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from board.doctor import board_checks
from daemon.targets.profile import load_profile

REPO = Path(__file__).resolve().parents[2]
x86_only = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the simulator profile is x86_64"
)


def doctor(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("QNN_LIB_DIR",)}
    return subprocess.run(
        [sys.executable, "-m", "daemon.cli", "doctor", *args],
        cwd=REPO,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@x86_only
def test_simulator_profile_passes_with_the_test_voice(voice: Path, tone_site: Path):
    p = doctor(
        "--profile", "simulator", "--bundle", str(voice), "--json",
        env={"PYTHONPATH": str(tone_site)},
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads(p.stdout)  # nothing else on stdout (QNN banners go to stderr)
    assert report["errors"] == 0 and report["warnings"] == 0
    levels = {f["check"]: f["level"] for f in report["findings"]}
    assert list(levels) == [
        c.name for c in board_checks(load_profile("simulator"), None)
    ]
    assert set(levels.values()) == {"ok"}
    run = [f for f in report["findings"] if f["check"] == "npu-run"][0]
    assert run["message"].startswith("loaded graphs/matmul.bin")


def test_text_report_on_a_fake_board_fails_and_names_fixes(board: Path, board_env):
    p = doctor("--profile", "qcs8550", "--root", str(board), env=board_env)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert "[ok]       device-access: hexvoice can open /dev/adsprpc-smd" in lines
    assert "[ok]       soc-id: /sys/devices/soc0/soc_id = 603 (qcs8550)" in lines
    assert any(
        ln.startswith("[ERROR]    qnn-load: QNN libraries do not load") for ln in lines
    )
    assert "--ignore NAME" in p.stdout


def test_ignore_demotes_and_exit_is_zero_with_only_warnings(board: Path, board_env):
    errors_here = "machine,qnn-load" if platform.machine() != "aarch64" else "qnn-load"
    p = doctor(
        "--profile",
        "qcs8550",
        "--root",
        str(board),
        "--ignore",
        errors_here,
        "--json",
        env=board_env,
    )
    assert p.returncode == 0, p.stdout
    report = json.loads(p.stdout)
    ignored = [f for f in report["findings"] if f["ignored"]]
    assert {f["check"] for f in ignored} == set(errors_here.split(","))
    assert all(f["level"] == "warning" for f in ignored)


def test_group_problem_is_reported_with_usermod(board: Path, board_env):
    (board / "etc/group").write_text(f"system:x:{os.getgid()}:\nhexvoice:x:990:\n")
    p = doctor(
        "--profile", "qcs8550", "--root", str(board), "--ignore", "all", env=board_env
    )
    assert p.returncode == 0  # everything demoted
    assert "fix: sudo usermod -aG system hexvoice" in p.stdout
    assert "[WARNING](ignored) device-access:" in p.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--ignore", "sco-id"], "unknown check(s) ['sco-id']"),
        (["--profile", "qcs6490"], "unknown profile 'qcs6490'"),
    ],
)
def test_bad_arguments_exit_2(args, message):
    p = doctor(*args)
    assert p.returncode == 2 and message in p.stderr
