"""Preflight framework: small named checks, all run, all reported (kubeadm style).

A :class:`Check` is a frozen dataclass with a ``name`` and ``run(target)`` returning
:class:`Finding` s; each error or warning carries the command or step that fixes it.
:func:`run_checks` runs every check (a crashing check is itself an error finding)
and demotes the errors of ``--ignore`` d checks to warnings.

Every file, sysfs and /dev lookup goes through :meth:`Target.path`, so ``--root``
points the whole doctor at a fake tree.  Generic OS-level checks live here, device
access in :mod:`board.device_checks`, QNN in :mod:`board.qnn_checks`, the DSP search
path in :mod:`board.dsp_checks`, the voice bundle in :mod:`board.bundle_checks`;
what the last three share about the board, in :mod:`board.target`.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import itertools
import os
import platform
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, Final

OK: Final = "ok"
SKIP: Final = "skip"
WARNING: Final = "warning"
ERROR: Final = "error"
#: ``--ignore all`` demotes every check.
IGNORE_ALL: Final = "all"
_KIB: Final = 1024
_MIB: Final = 1 << 20
#: /proc/meminfo (proc(5)): the kernel's estimate of memory usable without swapping.
_MEMINFO_KEY: Final = "MemAvailable:"


@dataclass(frozen=True)
class Finding:
    level: str  # OK | SKIP | WARNING | ERROR
    message: str
    fix: str = ""
    check: str = ""
    ignored: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "check": self.check,
            "level": self.level,
            "message": self.message,
            "fix": self.fix,
            "ignored": self.ignored,
        }


def ok(message: str) -> Finding:
    return Finding(OK, message)


def skip(message: str) -> Finding:
    return Finding(SKIP, message)


def warning(message: str, fix: str) -> Finding:
    return Finding(WARNING, message, fix)


def error(message: str, fix: str) -> Finding:
    return Finding(ERROR, message, fix)


@dataclass(frozen=True)
class Target:
    """The machine (or fake tree) under inspection."""

    root: Path = Path("/")
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    @property
    def live(self) -> bool:
        """True when checking this very machine (not a fake tree)."""
        return self.root.resolve() == Path("/")

    def path(self, board_path: str) -> Path:
        """Where a board path (``/dev/adsprpc-smd``) is on this host."""
        return self.root / board_path.lstrip("/")


@dataclass(frozen=True)
class Check:
    name: str
    #: Takes seconds (hashing, NPU loads): the doctor says so before it starts.
    slow: ClassVar[bool] = False

    def run(self, t: Target) -> list[Finding]:
        raise NotImplementedError


def run_checks(
    checks: Iterable[Check],
    target: Target,
    ignore: Iterable[str] = (),
    report: Callable[[Finding], None] | None = None,
    started: Callable[[Check], None] | None = None,
) -> list[Finding]:
    """Run all checks; errors of ignored checks become (marked) warnings."""
    ignored = set(ignore)
    out = []
    for check in checks:
        if started:
            started(check)
        try:
            found = check.run(target) or [ok("passed")]
        except Exception as exc:  # noqa: BLE001 - a broken check must not hide others
            found = [error(f"check crashed: {exc!r}", "report this as a hexvoice bug")]
        for f in found:
            f = replace(f, check=check.name)
            if f.level == ERROR and (check.name in ignored or IGNORE_ALL in ignored):
                f = replace(f, level=WARNING, ignored=True)
            out.append(f)
            if report:
                report(f)
    return out


def parse_version(text: str) -> tuple[int, ...]:
    """Leading dotted integers of a version string ("2.36", "1.26.4", "v2.51.0.1")."""
    parts = []
    for p in text.lstrip("v").split("."):
        digits = "".join(itertools.takewhile(str.isdigit, p))
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) < len(p):  # "0rc1": a pre-release suffix ends the version
            break
    return tuple(parts)


def show(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


# --------------------------------------------------------------- what is running
def glibc_version() -> str | None:
    try:
        name, _, ver = os.confstr("CS_GNU_LIBC_VERSION").partition(" ")
    except (ValueError, OSError, AttributeError):
        return None
    return ver if name == "glibc" else None


def dist_version(dist: str) -> Callable[[], str | None]:
    def read() -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    return read


@dataclass(frozen=True)
class Machine(Check):
    machine: str
    fix: str

    def run(self, t: Target) -> list[Finding]:
        have = platform.machine()
        if have != self.machine:
            return [
                error(f"this is {have}; the profile is for {self.machine}", self.fix)
            ]
        return [ok(have)]


@dataclass(frozen=True)
class VersionAtLeast(Check):
    what: str
    minimum: tuple[int, ...]
    current: Callable[[], str | None]
    fix: str

    def run(self, t: Target) -> list[Finding]:
        have = self.current()
        if have is None:
            return [error(f"{self.what} not found", self.fix)]
        if parse_version(have) < self.minimum:
            return [
                error(f"{self.what} {have} < {show(self.minimum)} required", self.fix)
            ]
        return [ok(f"{self.what} {have} >= {show(self.minimum)}")]


# --------------------------------------------------------------- files and devices
@dataclass(frozen=True)
class FileEquals(Check):
    """A small (sysfs) file holds the expected value."""

    path: str
    expected: str
    what: str
    fix: str

    def run(self, t: Target) -> list[Finding]:
        try:
            have = t.path(self.path).read_text().strip()
        except OSError as exc:
            return [error(f"cannot read {self.path}: {exc.strerror}", self.fix)]
        if have != self.expected:
            return [
                error(
                    f"{self.path} is {have}, not {self.expected} ({self.what})",
                    self.fix,
                )
            ]
        return [ok(f"{self.path} = {have} ({self.what})")]


@dataclass(frozen=True)
class LibraryLoads(Check):
    """A shared library is found in ``dirs`` (or by the dynamic loader) and loads."""

    library: str
    dirs: tuple[str, ...]
    fix: str

    def run(self, t: Target) -> list[Finding]:
        ld = [d for d in t.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
        found = [t.path(d) / self.library for d in (*ld, *self.dirs)]
        found = [p for p in found if p.is_file()]
        target = str(found[0]) if found else (self.library if t.live else None)
        if target is None:
            where = ", ".join((*ld, *self.dirs))
            return [error(f"{self.library} not found in {where}", self.fix)]
        try:
            ctypes.CDLL(target, mode=os.RTLD_LOCAL)
        except OSError as exc:
            return [error(f"cannot load {self.library}: {exc}", self.fix)]
        return [ok(f"{target} loads")]


# --------------------------------------------------------------- resources
@dataclass(frozen=True)
class FreeMemory(Check):
    need: Callable[[Target], tuple[int, str]]  # bytes and how they were sized
    fix: str

    def run(self, t: Target) -> list[Finding]:
        need, why = self.need(t)
        try:
            lines = t.path("/proc/meminfo").read_text().splitlines()
            (kib,) = [ln.split()[1] for ln in lines if ln.startswith(_MEMINFO_KEY)]
            have = int(kib) * _KIB
        except (OSError, ValueError, IndexError):
            return [
                error(
                    "cannot read MemAvailable from /proc/meminfo",
                    "mount /proc (or, with --root, give the tree a proc/meminfo)",
                )
            ]
        msg = f"{have // _MIB} MiB available, {need // _MIB} MiB needed ({why})"
        return [error(msg, self.fix)] if have < need else [ok(msg)]


@dataclass(frozen=True)
class FreeDisk(Check):
    where: Callable[[Target], Path]
    need: Callable[[Target], tuple[int, str]]
    fix: str

    def run(self, t: Target) -> list[Finding]:
        path = self.where(t)
        while not path.exists():  # the install prefix may not exist yet
            path = path.parent
        have = shutil.disk_usage(path).free
        need, why = self.need(t)
        msg = f"{have // _MIB} MiB free on {path}, {need // _MIB} MiB needed ({why})"
        return [error(msg, self.fix)] if have < need else [ok(msg)]
