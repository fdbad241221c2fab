"""The check framework and the generic OS checks, against fake trees."""

from __future__ import annotations

import dataclasses
import platform
from pathlib import Path

import pytest

from board.checks import (
    ERROR,
    OK,
    WARNING,
    Check,
    Finding,
    Target,
    error,
    ok,
    parse_version,
    run_checks,
)


@dataclasses.dataclass(frozen=True)
class Fixed(Check):
    findings: tuple[Finding, ...]

    def run(self, t: Target) -> list[Finding]:
        return list(self.findings)


@dataclasses.dataclass(frozen=True)
class Broken(Check):
    def run(self, t: Target) -> list[Finding]:
        raise KeyError("boom")


def test_all_checks_run_and_every_finding_is_named():
    checks = [
        Fixed("a", (error("bad", "do x"),)),
        Broken("b"),
        Fixed("c", ()),
        Fixed("d", (ok("fine"), Finding(WARNING, "meh", "do y"))),
    ]
    seen: list[Finding] = []
    found = run_checks(checks, Target(), report=seen.append)
    assert seen == found
    assert [(f.check, f.level) for f in found] == [
        ("a", ERROR),
        ("b", ERROR),
        ("c", OK),  # a check with nothing to say passed
        ("d", OK),
        ("d", WARNING),
    ]
    assert "check crashed: KeyError('boom')" in found[1].message


def test_ignore_demotes_errors_of_the_named_check_only():
    checks = [
        Fixed("a", (error("bad", "fix a"),)),
        Fixed("b", (error("bad", "fix b"),)),
    ]
    found = run_checks(checks, Target(), ignore={"a"})
    assert [(f.level, f.ignored) for f in found] == [(WARNING, True), (ERROR, False)]
    assert found[0].fix == "fix a"  # the fix is still shown
    every = run_checks(checks, Target(), ignore={"all"})
    assert {f.level for f in every} == {WARNING}


@pytest.mark.parametrize(
    "text,want",
    [
        ("2.36", (2, 36)),
        ("1.26.4", (1, 26, 4)),
        ("v2.51.0.2609", (2, 51, 0, 2609)),
        ("2.0.0rc1", (2, 0, 0)),
        ("3.11.7+", (3, 11, 7)),
        ("dev", ()),
    ],
)
def test_parse_version(text, want):
    assert parse_version(text) == want


def test_target_paths_are_rooted(tmp_path: Path):
    t = Target(root=tmp_path)
    assert t.path("/dev/adsprpc-smd") == tmp_path / "dev/adsprpc-smd"
    assert not t.live and Target().live


# ------------------------------------------------------- versions and machine
def test_this_machine_passes_the_simulator_basics(run_check, simulator):
    for name in ("glibc", "python", "numpy"):
        (f,) = run_check(name, simulator)
        assert f.level == OK, f
    (m,) = run_check("machine", simulator)
    assert m.level == (OK if platform.machine() == "x86_64" else ERROR)


@pytest.mark.parametrize(
    "name,field,message",
    [
        ("glibc", "min_glibc", "glibc"),
        ("python", "min_python", "Python"),
        ("numpy", "min_numpy", "numpy"),
    ],
)
def test_too_old_versions_are_errors_with_fixes(
    run_check, qcs8550, name, field, message
):
    too_new = dataclasses.replace(qcs8550, **{field: (99, 0)})
    (f,) = run_check(name, too_new)
    assert f.level == ERROR and f.message.startswith(message)
    assert "< 99.0 required" in f.message
    fixes = {"glibc": "Ubuntu 22.04", "python": "install.sh", "numpy": "venv"}
    assert fixes[name] in f.fix


@pytest.mark.skipif(platform.machine() == "aarch64", reason="runs on x86 hosts")
def test_board_profile_on_a_pc_names_the_simulator_profile(run_check, qcs8550):
    (f,) = run_check("machine", qcs8550)
    assert f.level == ERROR and "the profile is for aarch64" in f.message
    assert "simulator" in f.fix


# ------------------------------------------------------- sysfs, libraries
def test_soc_id_matches(run_check, qcs8550, board):
    (f,) = run_check("soc-id", qcs8550, root=board)
    assert f.level == OK and "603" in f.message


def test_wrong_soc_id_is_an_error(run_check, qcs8550, board):
    (board / "sys/devices/soc0/soc_id").write_text("519\n")
    (f,) = run_check("soc-id", qcs8550, root=board)
    assert f.level == ERROR and "is 519, not 603" in f.message
    assert "--ignore soc-id" in f.fix


def test_missing_soc_id_is_an_error(run_check, qcs8550, board):
    (board / "sys/devices/soc0/soc_id").unlink()
    (f,) = run_check("soc-id", qcs8550, root=board)
    assert f.level == ERROR and "cannot read /sys/devices/soc0/soc_id" in f.message


def test_libcdsprpc_loads(run_check, qcs8550, board):
    (f,) = run_check("fastrpc-lib", qcs8550, root=board)
    assert f.level == OK and f.message.endswith("usr/lib/libcdsprpc.so loads")


def test_missing_libcdsprpc_names_the_bsp(run_check, qcs8550, board):
    (board / "usr/lib/libcdsprpc.so").unlink()
    (f,) = run_check("fastrpc-lib", qcs8550, root=board)
    assert f.level == ERROR and "libcdsprpc.so not found in" in f.message
    assert "BSP" in f.fix and "LD_LIBRARY_PATH" in f.fix


def test_unloadable_libcdsprpc_is_an_error(run_check, qcs8550, board):
    (board / "usr/lib/libcdsprpc.so").write_bytes(b"not a shared object")
    (f,) = run_check("fastrpc-lib", qcs8550, root=board)
    assert f.level == ERROR and f.message.startswith("cannot load libcdsprpc.so")


# ------------------------------------------------------- resources
def test_memory_and_disk_pass_on_a_roomy_board(run_check, qcs8550, board):
    (m,) = run_check("memory", qcs8550, root=board)
    assert m.level == OK and m.message.startswith("7812 MiB available, 1024 MiB")
    (d,) = run_check("disk", qcs8550, root=board)
    assert d.level == OK


def test_low_memory_is_an_error(run_check, qcs8550, board):
    (board / "proc/meminfo").write_text("MemAvailable:     204800 kB\n")
    (f,) = run_check("memory", qcs8550, root=board)
    assert f.level == ERROR and "200 MiB available, 1024 MiB needed" in f.message


def test_unreadable_meminfo_is_an_error(run_check, qcs8550, board):
    (board / "proc/meminfo").unlink()
    (f,) = run_check("memory", qcs8550, root=board)
    assert f.level == ERROR and "MemAvailable" in f.message and "/proc" in f.fix


def test_low_disk_is_an_error(run_check, qcs8550, board):
    greedy = dataclasses.replace(qcs8550, free_disk_bytes=1 << 60)
    (f,) = run_check("disk", greedy, root=board)
    assert f.level == ERROR and "MiB free on" in f.message and "journalctl" in f.fix


def test_bundle_size_counts_towards_memory_and_disk(run_check, simulator, voice):
    (m,) = run_check("memory", simulator, bundle=voice)
    assert "512 MiB + 2 x 0 MiB of graphs" in m.message
    (d,) = run_check("disk", simulator, bundle=voice)
    assert "room for a 0 MiB bundle" in d.message and str(voice) in d.message
