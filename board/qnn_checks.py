"""QNN library checks of ``hexvoice doctor``: present, the right QAIRT build,
loading, and the SDK the bundle was compiled with.

Failures are reported with the board errors they cause in practice
(docs/board.md, board setup) and the fix for each.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

from daemon.sdk.bundles.manifest import Bundle

from .checks import Check, Finding, error, ok, parse_version, skip, warning
from .target import ENV_FILE, BoardTarget, install_fix

#: Written by board/install.sh next to the libraries it copied (which lib/<flavour>).
MARKER: Final = "hexvoice-qnn.yaml"
#: QAIRT ``lib/<flavour>`` directory names and the machine they run on.
QAIRT_FLAVOURS: Final = {
    "aarch64-oe-linux-gcc11.2": "aarch64",
    "aarch64-oe-linux-gcc9.3": "aarch64",
    "aarch64-oe-linux-gcc8.2": "aarch64",
    "aarch64-ubuntu-gcc9.4": "aarch64",
    "aarch64-android": "aarch64",
    "x86_64-linux-clang": "x86_64",
}
#: elf.h: e_ident[EI_DATA] (byte 5) and e_machine (after e_ident[16] and e_type).
_EI_DATA: Final = 5
_ELFDATA2LSB: Final = 1
_E_MACHINE: Final = slice(18, 20)
_EM_NAMES: Final = {62: "x86_64", 183: "aarch64"}  # EM_X86_64, EM_AARCH64
_SDK_RELEASE: Final = 3  # major.minor.patch; a 4th field is the build stamp


def elf_machine(path: Path) -> str | None:
    with path.open("rb") as f:
        head = f.read(_E_MACHINE.stop)
    if not head.startswith(b"\x7fELF") or len(head) < _E_MACHINE.stop:
        return None
    order = "little" if head[_EI_DATA] == _ELFDATA2LSB else "big"
    em = int.from_bytes(head[_E_MACHINE], order)
    return _EM_NAMES.get(em, f"EM {em}")


@dataclass(frozen=True)
class QnnLibs(Check):
    """Host libraries present; the stub's directory on LD_LIBRARY_PATH."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        p = t.profile
        if t.lib_dir is None:
            return [
                error(
                    "no QNN libraries: the onnxruntime-qnn wheel is not installed",
                    "pip install 'hexvoice[sim]' (x86_64 HTP simulator)",
                )
            ]
        named, local = t.lib_dir
        missing = [f for f in p.qnn.host_libs if not (local / f).is_file()]
        if missing:
            return [error(f"{', '.join(missing)} missing in {named}", install_fix(p))]
        found = [ok(f"{', '.join(p.qnn.host_libs)} in {named}")]
        ld = t.environ.get("LD_LIBRARY_PATH", "").split(":")
        if p.qnn.stub and named not in ld:
            found.append(
                warning(
                    f"{named} is not on LD_LIBRARY_PATH: libQnnHtp.so loads "
                    f"{p.qnn.stub} by name, so the NPU fails to start (QNN 1009)",
                    f"set -a; . {ENV_FILE}; set +a (the service unit reads that file)",
                )
            )
        return found


@dataclass(frozen=True)
class QnnFlavour(Check):
    """The libraries are the QAIRT build this board needs (lib/<flavour>)."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        p, want = t.profile, t.profile.qnn.flavour
        if t.lib_dir is None or not (t.lib_dir[1] / "libQnnHtp.so").is_file():
            return [skip("no libQnnHtp.so (see qnn-libs)")]
        named, local = t.lib_dir
        wrong = (
            f"{p.name} needs lib/{want}; other builds fail at backend start "
            f"(gcc9.3: 'Unsupported SoC model {p.htp.soc_model}' in deviceCreate)"
        )
        machine = elf_machine(local / "libQnnHtp.so")
        if machine is None:
            return [error(f"{named}/libQnnHtp.so is not an ELF file", install_fix(p))]
        if machine != p.machine:
            return [
                error(
                    f"{named}/libQnnHtp.so is built for {machine}; {wrong}",
                    install_fix(p),
                )
            ]
        if (local / MARKER).is_file():
            have = (yaml.safe_load((local / MARKER).read_text()) or {}).get("flavour")
            if have != want:
                return [error(f"{named} holds lib/{have}; {wrong}", install_fix(p))]
            return [ok(f"lib/{have} ({named}/{MARKER})")]
        same_machine = [f for f, m in QAIRT_FLAVOURS.items() if m == machine]
        if same_machine == [want]:
            return [ok(f"lib/{want} (the only {machine} build)")]
        return [
            warning(
                f"cannot tell which QAIRT lib/<flavour> {named} came from (no "
                f"{MARKER}); {wrong}",
                install_fix(p),
            )
        ]


@dataclass(frozen=True)
class QnnLoads(Check):
    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        lib = t.lib
        if isinstance(lib, Exception):
            return [error(f"QNN libraries do not load: {lib}", install_fix(t.profile))]
        return [
            ok(f"QNN {lib.build_id} (core API {lib.core_api_version}), {lib.lib_dir}")
        ]


def same_sdk(runtime: str, compiled: str) -> str | None:
    """None if compatible, else "release" (fatal) or "build" (same release)."""
    r, c = parse_version(runtime), parse_version(compiled)
    if r[:_SDK_RELEASE] != c[:_SDK_RELEASE]:
        return "release"
    if len(c) > _SDK_RELEASE and len(r) > _SDK_RELEASE and r != c:
        return "build"
    return None


@dataclass(frozen=True)
class QnnVersion(Check):
    """The runtime is the QNN SDK the bundle's binaries were compiled with."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        lib, b = t.lib, t.bundle
        if isinstance(lib, Exception):
            return [skip("needs qnn-load")]
        if not isinstance(b, Bundle):
            return [ok(f"runtime {lib.build_id}; no bundle to compare with")]
        compiled = [("voice.yaml qnn_sdk", b.qnn_sdk)] if b.qnn_sdk else []
        compiled += [
            (file, i.build_id)
            for file, i in t.binary_infos.items()
            if not isinstance(i, Exception)
        ]
        fix = (
            f"install the QNN runtime the bundle was compiled with "
            f"({install_fix(t.profile)} from that SDK version), or recompile the "
            f"bundle with QNN {lib.build_id}"
        )
        found = []
        for what, version in compiled:
            diff = same_sdk(lib.build_id, version)
            msg = f"{what}: compiled with QNN {version}, runtime is {lib.build_id}"
            if diff == "release":
                found.append(error(msg + " (contextCreateFromBinary fails: 5000)", fix))
            elif diff == "build":
                found.append(warning(msg + " (same release, other build)", fix))
        return found or [ok(f"runtime {lib.build_id} matches the bundle")]
