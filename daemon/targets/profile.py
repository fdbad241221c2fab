"""Target profiles: what a board (or the simulator) is and needs, as data.

The profiles are ``daemon/targets/*.yaml``.  A bundle names the
profile it was compiled for (``target``); ``sdk.verify`` checks its binaries
against it, ``hexvoice doctor`` checks the machine against it and
``board/install.sh`` installs by it (through ``python -m board.profile``), so the
three share one source of truth.  A profile is loaded once at the edge into a
frozen dataclass and validated before anything looks at the machine, so a typo
in a profile is a clear error, not a confusing finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

import msgspec
import yaml

from daemon.config.fields import Index, Text
from daemon.config.reader import ReadError, invalid, read

PROFILE_DIR: Final = Path(__file__).resolve().parent
#: ``platform.machine()`` values a profile may name.
MACHINES: Final = ("aarch64", "x86_64")
#: ``FastRPC`` splits ADSP_LIBRARY_PATH on ';' (docs/board.md, board setup).
ADSP_SEPARATOR: Final = ";"
_MB: Final = 1 << 20


# What profile values look like (the reader checks them).
Texts = tuple[Text, ...]
AbsPath = Annotated[str, msgspec.Meta(pattern="^/", description="an absolute path")]
#: Counts and sizes (MB, ids) in a profile are >= 0.
Size = Index
Version = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[0-9]+(\.[0-9]+)*$",
        description='a dotted version string such as "2.34"',
    ),
]


class ProfileError(ReadError):
    """A profile is missing, malformed or names an unknown field."""


@dataclass(frozen=True, kw_only=True)
class Qnn:
    flavour: Text
    lib_dir: AbsPath | None = None  # None: the onnxruntime_qnn wheel (x86 simulator)
    dsp_dir: AbsPath | None = None
    host_libs: Texts
    stub: Text | None = None
    skel_libs: Texts


@dataclass(frozen=True)
class Htp:
    arch: int
    soc_model: int
    binary_soc_models: tuple[int, ...]
    vtcm_bytes: int
    bundle_targets: tuple[str, ...]
    #: graphs of one model that differ only in static shape are compiled into
    #: one binary holding one copy of their weights (False: a binary per graph)
    share_weights: bool = False


@dataclass(frozen=True)
class Soc:
    sysfs_path: AbsPath
    soc_id: Size


@dataclass(frozen=True)
class FastRpc:
    library: Text
    library_dirs: tuple[AbsPath, ...]
    device_nodes: tuple[AbsPath, ...]
    device_group: Text


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
    f = read(data, _File, where=str(source), error=ProfileError)
    h = f.htp
    return Profile(
        name=f.name,
        description=f.description,
        machine=f.machine,
        min_glibc=_version(f.versions.glibc),
        min_python=_version(f.versions.python),
        min_numpy=_version(f.versions.numpy),
        qnn=f.qnn,
        htp=Htp(
            arch=h.arch,
            soc_model=h.soc_model,
            binary_soc_models=h.binary_soc_models,
            vtcm_bytes=h.vtcm_mb * _MB,
            bundle_targets=h.bundle_targets,
            share_weights=h.share_weights,
        ),
        soc=f.soc,
        fastrpc=f.fastrpc,
        adsp_library_path=f.adsp_library_path,
        service_user=f.service_user,
        install_prefix=f.install_prefix,
        free_ram_bytes=f.resources.free_ram_mb * _MB,
        free_disk_bytes=f.resources.free_disk_mb * _MB,
        source=source,
    )


class _Versions(msgspec.Struct, frozen=True):
    glibc: Version
    python: Version
    numpy: Version


class _Htp(msgspec.Struct, frozen=True):
    arch: Size
    soc_model: Size
    binary_soc_models: tuple[int, ...]
    vtcm_mb: Size
    bundle_targets: Texts
    share_weights: bool = False


class _Resources(msgspec.Struct, frozen=True):
    free_ram_mb: Size
    free_disk_mb: Size


class _File(msgspec.Struct, frozen=True):
    name: Text
    description: Text
    machine: Text
    versions: _Versions
    qnn: Qnn
    htp: _Htp
    resources: _Resources
    adsp_library_path: Texts
    install_prefix: AbsPath
    soc: Soc | None = None
    fastrpc: FastRpc | None = None
    service_user: Text | None = None

    def __post_init__(self) -> None:
        if self.machine not in MACHINES:
            raise invalid("machine", f"one of {list(MACHINES)}", self.machine)
        adsp = self.adsp_library_path
        if any(ADSP_SEPARATOR in d or not d.startswith("/") for d in adsp):
            raise invalid(
                "adsp_library_path",
                f"absolute dirs without {ADSP_SEPARATOR!r}",
                list(adsp),
            )
        if self.qnn.stub and self.qnn.stub not in self.qnn.host_libs:
            raise invalid(
                "qnn.stub",
                f"one of qnn.host_libs {list(self.qnn.host_libs)}",
                self.qnn.stub,
            )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))
