"""QNN library, flavour and version checks: real simulator libraries for the x86
side, fake board trees for the board side."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import qnnrt
from board.checks import ERROR, OK, SKIP, WARNING
from board.qnn_checks import MARKER, elf_machine, same_sdk
from daemon.sdk.bundles.manifest import MANIFEST

INSTALL = "install.sh --qairt"


def test_simulator_libraries_pass(run_check, simulator):
    (libs,) = run_check("qnn-libs", simulator)
    assert libs.level == OK and "libQnnHtp.so, libQnnSystem.so in" in libs.message
    (flavour,) = run_check("qnn-flavour", simulator)
    assert flavour.level == OK and "x86_64-linux-clang" in flavour.message
    (load,) = run_check("qnn-load", simulator)
    assert load.level == OK and qnnrt.load_library().build_id in load.message


def test_board_libraries_pass_the_file_checks(run_check, qcs8550, board, board_env):
    (libs,) = run_check("qnn-libs", qcs8550, root=board, env=board_env)
    assert libs.level == OK and libs.message.endswith("in /opt/hexvoice/qnn/lib")
    (flavour,) = run_check("qnn-flavour", qcs8550, root=board, env=board_env)
    assert flavour.level == OK
    assert (
        flavour.message
        == f"lib/aarch64-oe-linux-gcc11.2 (/opt/hexvoice/qnn/lib/{MARKER})"
    )


def test_missing_stub_is_an_error(run_check, qcs8550, board, board_env):
    (board / "opt/hexvoice/qnn/lib/libQnnHtpV73Stub.so").unlink()
    (f,) = run_check("qnn-libs", qcs8550, root=board, env=board_env)
    assert f.level == ERROR
    assert f.message == "libQnnHtpV73Stub.so missing in /opt/hexvoice/qnn/lib"
    assert INSTALL in f.fix and "lib/aarch64-oe-linux-gcc11.2" in f.fix


def test_stub_dir_not_on_ld_library_path_warns(run_check, qcs8550, board, board_env):
    env = dict(board_env, LD_LIBRARY_PATH="/usr/local/lib")
    ok_, f = run_check("qnn-libs", qcs8550, root=board, env=env)
    assert ok_.level == OK and f.level == WARNING
    assert "loads libQnnHtpV73Stub.so by name" in f.message
    assert "/etc/hexvoice/hexvoice.env" in f.fix


def test_qnn_lib_dir_env_is_followed_into_the_root(run_check, qcs8550, board):
    env = {"QNN_LIB_DIR": "/elsewhere", "LD_LIBRARY_PATH": "/elsewhere"}
    (f,) = run_check("qnn-libs", qcs8550, root=board, env=env)
    assert f.level == ERROR and "missing in /elsewhere" in f.message


def test_gcc93_flavour_names_unsupported_soc_66(run_check, qcs8550, board, board_env):
    marker = board / "opt/hexvoice/qnn/lib" / MARKER
    marker.write_text("flavour: aarch64-oe-linux-gcc9.3\n")
    (f,) = run_check("qnn-flavour", qcs8550, root=board, env=board_env)
    assert f.level == ERROR
    assert "holds lib/aarch64-oe-linux-gcc9.3" in f.message
    assert "'Unsupported SoC model 66'" in f.message
    assert INSTALL in f.fix and "lib/aarch64-oe-linux-gcc11.2" in f.fix


def test_x86_libraries_on_the_board_are_an_error(run_check, qcs8550, board, board_env):
    sim = qnnrt.simulator_lib_dir()
    shutil.copyfile(sim / "libQnnHtp.so", board / "opt/hexvoice/qnn/lib/libQnnHtp.so")
    (f,) = run_check("qnn-flavour", qcs8550, root=board, env=board_env)
    assert f.level == ERROR and "libQnnHtp.so is built for x86_64" in f.message


def test_not_an_elf_file(run_check, qcs8550, board, board_env):
    (board / "opt/hexvoice/qnn/lib/libQnnHtp.so").write_text("<html>404</html>")
    (f,) = run_check("qnn-flavour", qcs8550, root=board, env=board_env)
    assert f.level == ERROR and f.message.endswith("libQnnHtp.so is not an ELF file")


def test_unknown_flavour_without_marker_warns(run_check, qcs8550, board, board_env):
    (board / "opt/hexvoice/qnn/lib" / MARKER).unlink()
    (f,) = run_check("qnn-flavour", qcs8550, root=board, env=board_env)
    assert f.level == WARNING and "cannot tell which QAIRT lib/<flavour>" in f.message


def test_libraries_that_do_not_load(run_check, qcs8550, board, board_env):
    # aarch64 headers on an x86 host, or truncated copies on a board: dlopen fails.
    (f,) = run_check("qnn-load", qcs8550, root=board, env=board_env)
    assert f.level == ERROR and f.message.startswith("QNN libraries do not load:")
    (v,) = run_check("qnn-version", qcs8550, root=board, env=board_env)
    assert v.level == SKIP


def test_elf_machine_reads_real_libraries(board: Path):
    sim = qnnrt.simulator_lib_dir()
    assert elf_machine(sim / "libQnnHtp.so") == "x86_64"
    assert elf_machine(board / "opt/hexvoice/qnn/lib/libQnnHtp.so") == "aarch64"


# ------------------------------------------------------- runtime vs compile version
def test_runtime_matches_the_test_bundle(run_check, simulator, voice):
    (f,) = run_check("qnn-version", simulator, bundle=voice)
    assert f.level == OK and "matches the bundle" in f.message


@pytest.mark.parametrize(
    "runtime,compiled,want",
    [
        ("v2.51.0.260929181845", "2.51.0", None),
        ("v2.51.0.260929181845", "2.51.0.260929181845", None),
        ("v2.51.0.260929181845", "2.51.0.260828000000", "build"),
        ("v2.51.0.260929181845", "2.50.0.260828", "release"),
        ("v2.51.0.260929181845", "v2.51.1", "release"),
    ],
)
def test_same_sdk(runtime, compiled, want):
    assert same_sdk(runtime, compiled) == want


def test_bundle_compiled_with_another_qnn_is_an_error(run_check, simulator, voice):
    m = yaml.safe_load((voice / MANIFEST).read_text())
    m["qnn_sdk"] = "2.50.0.260828"
    (voice / MANIFEST).write_text(yaml.safe_dump(m))
    (f,) = run_check("qnn-version", simulator, bundle=voice)
    assert f.level == ERROR
    assert f.message.startswith("voice.yaml qnn_sdk: compiled with QNN 2.50.0.260828")
    assert "contextCreateFromBinary fails: 5000" in f.message
    assert INSTALL in f.fix and "recompile the bundle" in f.fix


def test_other_build_of_the_same_release_warns(run_check, simulator, voice):
    m = yaml.safe_load((voice / MANIFEST).read_text())
    m["qnn_sdk"] = "2.51.0.1"
    (voice / MANIFEST).write_text(yaml.safe_dump(m))
    (f,) = run_check("qnn-version", simulator, bundle=voice)
    assert f.level == WARNING and "same release, other build" in f.message
