"""Fake board trees under tmp_path and a tiny real voice bundle for the doctor."""

from __future__ import annotations

import _ctypes
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import qnnrt
from board.checks import Finding, run_checks
from board.doctor import board_checks
from board.qnn_checks import MARKER
from board.target import BoardTarget
from daemon.sdk.bundles.manifest import (
    Bundle,
    GraphSpec,
    sha256_file,
    tensor_spec,
    write_manifest,
)
from daemon.targets.profile import Profile, load_profile
from tests.engine_site import TONE_ENGINE, engine_site, twins_bundle

SERVICE_UID = 990  # the fake tree's hexvoice user; never the test runner's uid
#: elf.h: ELFCLASS64, ELFDATA2LSB, EV_CURRENT; e_type ET_DYN; e_machine EM_AARCH64.
AARCH64_ELF_HEADER = (
    b"\x7fELF\x02\x01\x01"
    + bytes(9)
    + (3).to_bytes(2, "little")
    + (183).to_bytes(2, "little")
)


def make_board(root: Path, profile: Profile) -> Path:
    """A healthy QCS8550 tree: everything a file lookup can check is in place."""
    gid = os.getgid()  # files made here belong to this gid: call it "system"
    _write(
        root / "etc/passwd", f"hexvoice:x:{SERVICE_UID}:{SERVICE_UID}::/:/bin/false\n"
    )
    _write(root / "etc/group", f"system:x:{gid}:hexvoice\nhexvoice:x:{SERVICE_UID}:\n")
    node = _write(root / "dev/adsprpc-smd", "")
    node.chmod(0o660)
    _write(root / "sys/devices/soc0/soc_id", "603\n")
    _write(root / "proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 8000000 kB\n")
    lib = root / profile.qnn.lib_dir.lstrip("/")
    for name in profile.qnn.host_libs:
        _write(lib / name, "").write_bytes(AARCH64_ELF_HEADER + bytes(64))
    _write(lib / MARKER, f"flavour: {profile.qnn.flavour}\nqairt: /sdk\n")
    for name in profile.qnn.skel_libs:
        _write(root / profile.qnn.dsp_dir.lstrip("/") / name, "hexagon")
    (root / "usr/lib/rfsa/adsp").mkdir(parents=True)
    # A real x86_64/aarch64 shared object of this host, so "loads" means loads.
    shutil.copyfile(_ctypes.__file__, root / "usr/lib/libcdsprpc.so")
    return root


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def qcs8550() -> Profile:
    return load_profile("qcs8550")


@pytest.fixture
def simulator() -> Profile:
    return load_profile("simulator")


@pytest.fixture
def board(tmp_path: Path, qcs8550: Profile) -> Path:
    return make_board(tmp_path / "root", qcs8550)


@pytest.fixture
def board_env(qcs8550: Profile) -> dict[str, str]:
    return {
        "LD_LIBRARY_PATH": qcs8550.qnn.lib_dir,
        "ADSP_LIBRARY_PATH": qcs8550.adsp_value,
    }


@pytest.fixture(scope="session")
def tone_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the ``test-tone`` engine is registered (tests/engine_site.py): on
    ``sys.path`` in ``voice``, on ``PYTHONPATH`` for a doctor subprocess."""
    return engine_site(tmp_path_factory.mktemp("site"))


@pytest.fixture
def voice(tmp_path: Path, bins, tone_site: Path, monkeypatch) -> Path:
    """A one-graph bundle around the real matmul_tanh context binary, for the
    registered ``test-tone`` engine (graph ``mm``): verify asks the bundle's
    engine which graphs it runs."""
    monkeypatch.syspath_prepend(str(tone_site))
    root = tmp_path / "voice"
    (root / "graphs").mkdir(parents=True)
    bin_path = root / "graphs" / "matmul.bin"
    shutil.copyfile(bins["matmul_tanh"].bin_path, bin_path)
    (root / "table.npy").write_bytes(b"\x93NUMPY tiny table")
    (g,) = qnnrt.read_binary_info(bin_path).graphs
    write_manifest(
        Bundle(
            root=root,
            engine=TONE_ENGINE,
            name="tiny",
            sample_rate=16000,
            languages=("en",),
            graphs={
                "mm": GraphSpec(
                    key="mm",
                    file="graphs/matmul.bin",
                    sha256=sha256_file(bin_path),
                    inputs=tuple(tensor_spec(t) for t in g.inputs),
                    outputs=tuple(tensor_spec(t) for t in g.outputs),
                )
            },
            files={"table.npy": sha256_file(root / "table.npy")},
            qnn_sdk=bins["matmul_tanh"].qnn_sdk_version,
            target="simulator",
        )
    )
    return root


@pytest.fixture(scope="session")
def twins_bin(tmp_path_factory: pytest.TempPathFactory):
    """ONE context binary with two graphs (tests/qnnrt/tiny_models.twin_matmuls)."""
    pytest.importorskip("onnxruntime_qnn")
    from tests.qnnrt.tiny_models import twin_matmuls

    return twin_matmuls(tmp_path_factory.mktemp("twins"))


@pytest.fixture
def twins_voice(tmp_path: Path, twins_bin, tone_site: Path, monkeypatch) -> Path:
    """A bundle whose graphs ``mm`` and ``mm_sigmoid`` are both in one binary."""
    monkeypatch.syspath_prepend(str(tone_site))
    return twins_bundle(tmp_path / "twins", twins_bin)


Run = Callable[..., list[Finding]]


@pytest.fixture
def run_check() -> Run:
    """Findings of the named check, built exactly as ``hexvoice doctor`` builds it."""

    def run(
        name: str,
        profile: Profile,
        *,
        root: Path = Path("/"),
        env: dict[str, str] | None = None,
        bundle: Path | None = None,
        user: str | None = "hexvoice",
    ) -> list[Finding]:
        (check,) = [c for c in board_checks(profile, user) if c.name == name]
        target = BoardTarget(
            root=root, environ=env or {}, profile=profile, bundle_dir=bundle
        )
        return run_checks([check], target)

    return run
