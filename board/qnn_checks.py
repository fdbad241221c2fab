"""QNN, DSP and voice-bundle checks of ``hexvoice doctor``.

:class:`BoardTarget` adds what these checks share and should compute once: the QNN
library directory and its loaded libraries, the bundle and its verification.
Failures are reported with the board errors they cause in practice
(docs/board.md, board setup) and the fix for each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Final

import yaml

import qnnrt
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.bundles.verify import verify_bundle
from daemon.targets.profile import ADSP_SEPARATOR, Profile
from qnnrt import ENV_LIB_DIR  # $QNN_LIB_DIR, as qnnrt.load_library reads it
from qnnrt.c.dsp import DSP_ENV

from .checks import Check, Finding, Target, error, ok, parse_version, skip, warning

#: Written by board/install.sh next to the libraries it copied (which lib/<flavour>).
MARKER: Final = "hexvoice-qnn.yaml"
#: The service environment file board/install.sh writes (``python -m board.profile``).
ENV_FILE: Final = "/etc/hexvoice/hexvoice.env"
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
#: The host maps the binary while the DSP-side weights and spill-fill come from the
#: same (unified) DDR, so a context costs about twice its file size while loading.
CONTEXT_LOAD_FACTOR: Final = 2
_SDK_RELEASE: Final = 3  # major.minor.patch; a 4th field is the build stamp


@dataclass(frozen=True, kw_only=True)
class BoardTarget(Target):
    profile: Profile
    bundle_dir: Path | None = None

    @cached_property
    def lib_dir(self) -> tuple[str, Path] | None:
        """(directory as named on the board, where it is here) or None."""
        named = self.environ.get(ENV_LIB_DIR) or self.profile.qnn.lib_dir
        if named:
            return named, self.path(named)
        sim = qnnrt.simulator_lib_dir()  # a host Python package, never rooted
        return (str(sim), sim) if sim else None

    @cached_property
    def lib(self) -> qnnrt.QnnLibrary | Exception:
        if self.lib_dir is None:
            return qnnrt.QnnLibraryError("no QNN library directory")
        try:
            return qnnrt.load_library(self.lib_dir[1])
        except (qnnrt.QnnLibraryError, qnnrt.QnnError) as exc:
            return exc

    @cached_property
    def bundle(self) -> Bundle | Exception | None:
        if self.bundle_dir is None:
            return None
        try:
            return Bundle.load(self.bundle_dir)
        except BundleError as exc:
            return exc

    @cached_property
    def bundle_problems(self) -> list[str]:
        assert isinstance(self.bundle, Bundle)
        lib = self.lib
        if isinstance(lib, Exception):
            return verify_bundle(self.bundle, binaries=False)
        return verify_bundle(self.bundle, binaries=True, lib=lib)

    @cached_property
    def binary_infos(self) -> Mapping[str, qnnrt.BinaryInfo | Exception]:
        """Each context binary's metadata (or why not), by file, each read once."""
        assert isinstance(self.bundle, Bundle) and not isinstance(self.lib, Exception)
        out: dict[str, qnnrt.BinaryInfo | Exception] = {}
        for file in self.bundle.binaries:
            try:
                out[file] = qnnrt.read_binary_info(self.bundle.path(file), self.lib)
            except (OSError, ValueError, qnnrt.QnnError) as exc:
                out[file] = exc
        return out

    @property
    def adsp(self) -> tuple[str, str]:
        """The ADSP_LIBRARY_PATH in effect and where it came from."""
        value = self.environ.get("ADSP_LIBRARY_PATH")
        if value is not None:
            return value, "$ADSP_LIBRARY_PATH"
        return self.profile.adsp_value, f"profile default, as in {ENV_FILE}"

    def bundle_bytes(self, graphs_only: bool = False) -> int:
        b = self.bundle
        if not isinstance(b, Bundle):
            return 0
        rels = list(b.binaries)
        rels += [] if graphs_only else list(b.files)
        return sum(b.path(r).stat().st_size for r in rels if b.path(r).is_file())


def install_fix(p: Profile) -> str:
    return (
        f"sudo board/install.sh --qairt <QAIRT SDK dir> (copies lib/{p.qnn.flavour} "
        f"and lib/hexagon-v{p.htp.arch}/unsigned)"
    )


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


@dataclass(frozen=True)
class AdspPath(Check):
    """ADSP_LIBRARY_PATH is ';'-separated and keeps the system DSP dirs."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        p = t.profile
        value, source = t.adsp
        fix = f"export ADSP_LIBRARY_PATH='{p.adsp_value}' (as in {ENV_FILE})"
        if ":" in value and ADSP_SEPARATOR not in value:
            return [
                error(
                    f"ADSP_LIBRARY_PATH={value} uses ':'; FastRPC splits on ';', so "
                    f"this is one directory that does not exist",
                    fix,
                )
            ]
        entries = value.split(ADSP_SEPARATOR)
        dropped = [
            d
            for d in p.adsp_library_path
            if d != p.qnn.dsp_dir and d not in entries and t.path(d).is_dir()
        ]
        found = [ok(f"{value} ({source})")]
        if dropped:
            found = [
                warning(
                    f"ADSP_LIBRARY_PATH ({source}) leaves out the system DSP dir(s) "
                    f"{', '.join(dropped)}; FastRPC finds its own shell and other "
                    f"skels there",
                    fix,
                )
            ]
        dsp = t.environ.get(DSP_ENV)
        if dsp:
            # Upstream fastrpc reads it too: a skel found there is found.
            found.append(ok(f"{DSP_ENV}={dsp} (FastRPC searches it as well)"))
        return found


@dataclass(frozen=True)
class HtpSkel(Check):
    """The V73 skel is in a directory on ADSP_LIBRARY_PATH (or DSP_LIBRARY_PATH)."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        p = t.profile
        value, source = t.adsp
        entries = [e for e in value.split(ADSP_SEPARATOR) if e]
        entries += [e for e in t.environ.get(DSP_ENV, "").split(ADSP_SEPARATOR) if e]
        found = []
        for skel in p.qnn.skel_libs:
            dirs = [e for e in entries if (t.path(e) / skel).is_file()]
            if dirs:
                found.append(ok(f"{skel} in {dirs[0]}"))
            elif p.qnn.dsp_dir and (t.path(p.qnn.dsp_dir) / skel).is_file():
                found.append(
                    error(
                        f"{skel} is in {p.qnn.dsp_dir}, which is not on "
                        f"ADSP_LIBRARY_PATH ({source}: {value}); the DSP cannot "
                        f"load it (QNN 1009 / 1007)",
                        f"export ADSP_LIBRARY_PATH='{p.adsp_value}' (as in {ENV_FILE})",
                    )
                )
            else:
                found.append(
                    error(
                        f"{skel} not found on ADSP_LIBRARY_PATH ({value})",
                        install_fix(p),
                    )
                )
        return found
