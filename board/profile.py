"""Board profiles: what a target needs, as data (``board/profiles/*.yaml``).

A profile is loaded once at the edge (``hexvoice doctor``, ``install.sh``) into a
frozen dataclass and validated before anything looks at the machine, so a typo in
a profile is a clear error, not a confusing finding.

``python -m board.profile NAME --env`` prints the service environment file
(``/etc/hexvoice/hexvoice.env``) and ``--shell`` the variables ``board/install.sh``
reads, so the installer and the doctor share one source of truth.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from daemon.engine.fields import Fields

PROFILE_DIR: Final = Path(__file__).resolve().parent / "profiles"
#: ``platform.machine()`` values a profile may name.
MACHINES: Final = ("aarch64", "x86_64")
#: ``FastRPC`` splits ADSP_LIBRARY_PATH on ';' (reference-ports.md §1.11).
ADSP_SEPARATOR: Final = ";"
_MB: Final = 1 << 20


class ProfileError(ValueError):
    """A profile is missing, malformed or names an unknown field."""


@dataclass(frozen=True)
class Qnn:
    flavour: str
    lib_dir: str | None  # None: the onnxruntime_qnn wheel (x86 simulator)
    dsp_dir: str | None
    host_libs: tuple[str, ...]
    stub: str | None
    skel_libs: tuple[str, ...]


@dataclass(frozen=True)
class Htp:
    arch: int
    soc_model: int
    binary_soc_models: tuple[int, ...]
    vtcm_bytes: int
    bundle_targets: tuple[str, ...]


@dataclass(frozen=True)
class Soc:
    sysfs_path: str
    soc_id: int


@dataclass(frozen=True)
class FastRpc:
    library: str
    library_dirs: tuple[str, ...]
    device_nodes: tuple[str, ...]
    device_group: str


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    machine: str
    min_glibc: tuple[int, ...]
    min_python: tuple[int, ...]
    min_numpy: tuple[int, ...]
    qnn: Qnn
    htp: Htp
    soc: Soc | None
    fastrpc: FastRpc | None
    adsp_library_path: tuple[str, ...]
    service_user: str | None
    install_prefix: str
    free_ram_bytes: int
    free_disk_bytes: int
    source: Path

    @property
    def adsp_value(self) -> str:
        """The default ``ADSP_LIBRARY_PATH`` (semicolon-separated)."""
        return ADSP_SEPARATOR.join(self.adsp_library_path)

    def environment(self) -> dict[str, str]:
        """What the service needs in its environment (empty for the simulator)."""
        env = {}
        if self.qnn.lib_dir:
            env["QNN_LIB_DIR"] = self.qnn.lib_dir
            # libQnnHtp.so dlopens the V73 stub by name; ld.so reads this at exec.
            env["LD_LIBRARY_PATH"] = self.qnn.lib_dir
        if self.adsp_library_path:
            env["ADSP_LIBRARY_PATH"] = self.adsp_value
        return env


def available() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def load_profile(name_or_path: str | Path) -> Profile:
    """A bundled profile by name (``qcs8550``) or any profile YAML by path."""
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = PROFILE_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            raise ProfileError(
                f"unknown profile {str(name_or_path)!r}; available: "
                f"{', '.join(available())} (or a path to a profile .yaml)"
            )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ProfileError(f"{path}: invalid YAML: {exc}") from exc
    return from_dict(data, path)


def from_dict(data: Any, source: Path) -> Profile:
    top = _Fields(data, str(source), ProfileError)
    ver = top.section("versions")
    q = top.section("qnn")
    h = top.section("htp")
    res = top.section("resources")
    machine = top.text("machine")
    if machine not in MACHINES:
        raise ProfileError(f"{source}: machine {machine!r} not one of {MACHINES}")
    soc = top.section("soc", required=False)
    fr = top.section("fastrpc", required=False)
    adsp = top.strings("adsp_library_path")
    profile = Profile(
        name=top.text("name"),
        description=top.text("description"),
        machine=machine,
        min_glibc=ver.version("glibc"),
        min_python=ver.version("python"),
        min_numpy=ver.version("numpy"),
        qnn=Qnn(
            flavour=q.text("flavour"),
            lib_dir=q.path("lib_dir", required=False),
            dsp_dir=q.path("dsp_dir", required=False),
            host_libs=q.strings("host_libs"),
            stub=q.text("stub", required=False),
            skel_libs=q.strings("skel_libs"),
        ),
        htp=Htp(
            arch=h.integer("arch"),
            soc_model=h.integer("soc_model"),
            binary_soc_models=tuple(h.integer_list("binary_soc_models")),
            vtcm_bytes=h.integer("vtcm_mb") * _MB,
            bundle_targets=h.strings("bundle_targets"),
        ),
        soc=None
        if soc is None
        else Soc(sysfs_path=soc.path("sysfs_path"), soc_id=soc.integer("soc_id")),
        fastrpc=None
        if fr is None
        else FastRpc(
            library=fr.text("library"),
            library_dirs=tuple(fr.path_list("library_dirs")),
            device_nodes=tuple(fr.path_list("device_nodes")),
            device_group=fr.text("device_group"),
        ),
        adsp_library_path=adsp,
        service_user=top.text("service_user", required=False),
        install_prefix=top.path("install_prefix"),
        free_ram_bytes=res.integer("free_ram_mb") * _MB,
        free_disk_bytes=res.integer("free_disk_mb") * _MB,
        source=source,
    )
    for f in (top, ver, q, h, res, soc, fr):
        if f is not None:
            f.reject_unknown()
    if any(ADSP_SEPARATOR in d or not d.startswith("/") for d in adsp):
        raise ProfileError(f"{source}: adsp_library_path entries must be absolute dirs")
    if profile.qnn.stub and profile.qnn.stub not in profile.qnn.host_libs:
        raise ProfileError(f"{source}: qnn.stub must be one of qnn.host_libs")
    return profile


class _Fields(Fields):
    """Profile fields: integers are counts/sizes (>= 0); paths are absolute."""

    def integer(self, key: str, minimum: int | None = 0) -> int:
        return super().integer(key, minimum)

    def path(self, key: str, required: bool = True) -> Any:
        v = self.text(key, required)
        if v is not None and not v.startswith("/"):
            raise self.bad(key, "an absolute path")
        return v

    def path_list(self, key: str) -> tuple[str, ...]:
        v = self.strings(key)
        if not all(s.startswith("/") for s in v):
            raise self.bad(key, "a list of absolute paths")
        return v

    def integer_list(self, key: str) -> list[int]:
        v = self.value(key)
        if not isinstance(v, list) or not all(type(i) is int for i in v):
            raise self.bad(key, "a list of integers")
        return v

    def version(self, key: str) -> tuple[int, ...]:
        v = self.text(key)
        try:
            return tuple(int(p) for p in v.split("."))
        except ValueError:
            raise self.bad(key, 'a dotted version string such as "2.34"') from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m board.profile")
    parser.add_argument("profile", help=f"one of {available()} or a .yaml path")
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--env", action="store_true", help="print the service environment file"
    )
    what.add_argument(
        "--shell", action="store_true", help="print variables for board/install.sh"
    )
    args = parser.parse_args(argv)
    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.env:
        print(f"# hexvoice service environment (profile {profile.name}); edits kept")
        for key, value in profile.environment().items():
            # Quoted: ';' ends a command when a shell sources the file, and systemd's
            # EnvironmentFile strips the quotes.
            print(f'{key}="{value}"')
    elif args.shell:
        print(shell_variables(profile))
    else:
        print(f"{profile.name}: {profile.description} ({profile.source})")
    return 0


def shell_variables(p: Profile) -> str:
    """bash assignments (arrays for lists) of what board/install.sh needs."""
    values: dict[str, str | tuple[str, ...]] = {
        "PROFILE_NAME": p.name,
        "QNN_FLAVOUR": p.qnn.flavour,
        "QNN_LIB_DIR": p.qnn.lib_dir or "",
        "QNN_DSP_DIR": p.qnn.dsp_dir or "",
        "HTP_ARCH": str(p.htp.arch),
        "HOST_LIBS": p.qnn.host_libs,
        "SKEL_LIBS": p.qnn.skel_libs,
        "DEVICE_NODES": p.fastrpc.device_nodes if p.fastrpc else (),
        "DEVICE_GROUP": p.fastrpc.device_group if p.fastrpc else "",
        "SERVICE_USER": p.service_user or "",
        "INSTALL_PREFIX": p.install_prefix,
    }
    lines = []
    for key, v in values.items():
        if isinstance(v, tuple):
            lines.append(f"{key}=({' '.join(shlex.quote(x) for x in v)})")
        else:
            lines.append(f"{key}={shlex.quote(v)}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
