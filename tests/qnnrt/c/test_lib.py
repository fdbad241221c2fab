"""Library discovery and loading against the real QNN 2.51 x86_64 libraries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import qnnrt
from qnnrt.c import _lib

ROOT = Path(__file__).resolve().parents[3]


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (import state, stdout and environment
    of its own; ``env`` entries set to "" are removed)."""
    child = {k: v for k, v in {**os.environ, **env}.items() if v != ""}
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, env=child)  # fmt: skip


def test_simulator_libraries_are_found_and_version_checked():
    lib = qnnrt.load_library()
    assert lib.core_api_version.major == 2
    assert lib.system_api_version.major == 1
    assert lib.backend_id == 6 and lib.provider_name == "HTP_QTI_AISW"
    assert lib.build_id.startswith("v2.")
    assert qnnrt.load_library() is lib  # loaded once per directory


def test_import_loads_nothing():
    code = (
        "import sys, qnnrt; bad = [m for m in sys.modules if 'onnx' in m];"
        "print(bad or 'clean')"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert proc.stdout.strip() == "clean"


def test_explicit_dir_without_libraries_names_the_dir(tmp_path):
    with pytest.raises(qnnrt.QnnLibraryError, match=str(tmp_path)):
        qnnrt.load_library(tmp_path)


_LOAD_ERROR = (
    "import qnnrt\ntry:\n    qnnrt.load_library({args})\n"
    "except qnnrt.QnnLibraryError as e:\n    print(e)"
)


def test_env_var_without_libraries_names_the_variable(tmp_path):
    proc = _python(_LOAD_ERROR.format(args=""), **{_lib.ENV_LIB_DIR: str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert "$QNN_LIB_DIR" in proc.stdout and str(tmp_path) in proc.stdout


def test_nothing_found_says_what_to_set():
    args = "board_dirs=('/nonexistent/qnn',), simulator=False"
    proc = _python(_LOAD_ERROR.format(args=args), **{_lib.ENV_LIB_DIR: ""})
    assert proc.returncode == 0, proc.stderr[-1000:]
    msg = proc.stdout
    assert "QNN_LIB_DIR" in msg and "/nonexistent/qnn" in msg and "hexvoice[sim]" in msg


def test_a_non_elf_library_is_refused(tmp_path):
    for name in (_lib.HTP_LIBRARY, _lib.SYSTEM_LIBRARY):
        (tmp_path / name).write_text("INPUT(-lfoo)\n")  # e.g. a linker script
    with pytest.raises(qnnrt.QnnLibraryError, match="not an ELF"):
        qnnrt.load_library(tmp_path)


def test_rtld_local_lets_onnxruntime_load_afterwards():
    # With RTLD_GLOBAL the wheel's libc++abi/libunwind win and this segfaults.
    code = (
        "import qnnrt; qnnrt.load_library(); import onnxruntime as ort;"
        "ort.InferenceSession; print('ok')"
    )
    proc = _python(code)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-1000:]


def test_loading_keeps_the_banner_off_stdout():
    code = "import qnnrt; qnnrt.load_library(); print('DATA')"
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert proc.stdout == "DATA\n"
