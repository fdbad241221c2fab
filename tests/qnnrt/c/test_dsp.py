"""Stub and skel discovery outside systemd, on real files in tmp dirs (qnnrt.c.dsp)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from qnnrt import QnnError
from qnnrt.c import dsp

SYSTEM_DIRS = ";".join(dsp.FASTRPC_DEFAULT_DIRS)


@pytest.fixture(scope="module")
def stub_so(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real shared object of this machine to stand in for the aarch64 stub."""
    out = tmp_path_factory.mktemp("stub")
    src = out / "stub.c"
    src.write_text("int hexvoice_test_stub(void) { return 73; }\n")
    so = out / "stub.so"
    cc = shutil.which("cc")
    assert cc, "needs a C compiler"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return so


def _layout(root: Path, stub_so: Path, lib: str, skel: str | None) -> Path:
    lib_dir = root / lib
    lib_dir.mkdir(parents=True)
    shutil.copyfile(stub_so, lib_dir / dsp.STUB)
    if skel is not None:
        (root / skel).mkdir(parents=True, exist_ok=True)
        (root / skel / dsp.SKEL).write_bytes(b"hexagon skel")
    return lib_dir


def _mapped(path: Path) -> bool:
    return str(path) in Path("/proc/self/maps").read_text()


def test_install_layout_loads_the_stub_and_adds_the_skel_dir(tmp_path, stub_so):
    lib_dir = _layout(tmp_path, stub_so, "qnn/lib", "qnn/dsp")
    env: dict[str, str] = {}
    setup = dsp.prepare(lib_dir, env)
    assert setup.stub == lib_dir / dsp.STUB and _mapped(setup.stub)
    assert setup.skel_dir == tmp_path / "qnn/dsp"
    # FastRPC's own dirs stay searchable: setting the variable replaces them.
    assert env == {dsp.ADSP_ENV: f"{tmp_path / 'qnn/dsp'};{SYSTEM_DIRS}"}
    assert setup.extended == (dsp.ADSP_ENV,) and setup.problems == []


def test_qairt_sdk_layout_is_found_and_a_set_path_is_extended(tmp_path, stub_so):
    lib_dir = _layout(
        tmp_path, stub_so, "lib/aarch64-oe-linux-gcc11.2", "lib/hexagon-v73/unsigned"
    )
    env = {dsp.ADSP_ENV: "/usr/lib/rfsa/adsp", dsp.DSP_ENV: "/dsp"}
    setup = dsp.prepare(lib_dir, env)
    skel_dir = tmp_path / "lib/hexagon-v73/unsigned"
    assert setup.skel_dir == skel_dir
    assert env[dsp.ADSP_ENV] == f"{skel_dir};/usr/lib/rfsa/adsp"
    assert env[dsp.DSP_ENV] == f"{skel_dir};/dsp"


def test_a_skel_already_on_the_path_changes_nothing(tmp_path, stub_so):
    lib_dir = _layout(tmp_path, stub_so, "qnn/lib", "elsewhere")
    env = {dsp.DSP_ENV: f"/nonexistent;{tmp_path / 'elsewhere'}"}
    setup = dsp.prepare(lib_dir, env)
    assert setup.skel_dir == tmp_path / "elsewhere" and setup.extended == ()
    assert env == {dsp.DSP_ENV: f"/nonexistent;{tmp_path / 'elsewhere'}"}


def test_no_skel_anywhere_names_the_variable_instead_of_a_bare_1009(tmp_path, stub_so):
    lib_dir = _layout(tmp_path, stub_so, "qnn/lib", None)
    env = {dsp.ADSP_ENV: "/usr/lib/rfsa/adsp"}
    setup = dsp.prepare(lib_dir, env)
    assert env == {dsp.ADSP_ENV: "/usr/lib/rfsa/adsp"}  # nothing to add
    err = dsp.explained(setup, QnnError(1009, "deviceCreate"))
    msg = str(err)
    assert err.code == 1009 and err.call == "deviceCreate"
    assert f"set {dsp.ADSP_ENV} to '<directory holding {dsp.SKEL}>;" in msg
    assert "(/usr/lib/rfsa/adsp)" in msg  # what it was


def test_a_missing_stub_names_ld_library_path(tmp_path):
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    (tmp_path / "dsp").mkdir()
    (tmp_path / "dsp" / dsp.SKEL).write_bytes(b"skel")
    setup = dsp.prepare(lib_dir, {})
    assert setup.stub is None and setup.skel_dir == tmp_path / "dsp"
    msg = str(dsp.explained(setup, QnnError(1009, "backendCreate")))
    assert f"{dsp.STUB} is neither beside libQnnHtp.so" in msg
    assert "set LD_LIBRARY_PATH to the directory holding it" in msg


def test_a_stub_that_does_not_load_is_reported(tmp_path):
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    (lib_dir / dsp.STUB).write_bytes(b"\x7fELF not really")
    setup = dsp.prepare(lib_dir, {})
    assert setup.stub is None
    assert any(
        p.startswith(f"cannot load {lib_dir / dsp.STUB}") for p in setup.problems
    )


def test_other_errors_and_the_simulator_are_left_alone(tmp_path, stub_so):
    setup = dsp.prepare(_layout(tmp_path, stub_so, "qnn/lib", "qnn/dsp"), {})
    err = QnnError(5000, "contextCreateFromBinary")
    assert dsp.explained(setup, err) is err
    assert dsp.explained(None, QnnError(1009, "deviceCreate")).detail == ""


@pytest.mark.simulator
def test_the_simulator_library_needs_no_stub(backend):
    assert backend.lib.simulator is True and backend.lib.dsp is None
