"""``hexvoice doctor``: is this machine ready to serve? Every check, every fix.

    hexvoice doctor [--profile P] [--bundle DIR] [--root DIR] [--user NAME]
                    [--ignore NAME ...] [--json]

All checks run and all findings are reported; the exit status is 1 only if an
error remains (``--ignore NAME`` / ``--ignore all`` demotes errors to warnings),
2 for bad arguments.  ``--root`` looks up every file, sysfs and /dev path in a
fake tree instead of ``/``; ``--bundle`` is a path on this host.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TextIO

from daemon.targets.profile import Profile, ProfileError, available, load_profile

from .bundle_checks import BundleIntact, BundleTarget, NpuRun
from .checks import (
    ERROR,
    IGNORE_ALL,
    OK,
    SKIP,
    WARNING,
    Check,
    FileEquals,
    Finding,
    FreeDisk,
    FreeMemory,
    LibraryLoads,
    Machine,
    VersionAtLeast,
    dist_version,
    glibc_version,
    run_checks,
    show,
)
from .device_checks import DeviceAccess
from .dsp_checks import AdspPath, HtpSkel
from .memory_check import QnnMemory
from .qnn_checks import QnnFlavour, QnnLibs, QnnLoads, QnnVersion
from .target import CONTEXT_LOAD_FACTOR, BoardTarget

_MIB: Final = 1 << 20
_TAGS: Final = {OK: "[ok]", SKIP: "[skip]", WARNING: "[WARNING]", ERROR: "[ERROR]"}


def default_profile() -> str:
    return "simulator" if platform.machine() == "x86_64" else "qcs8550"


def board_checks(p: Profile, user: str | None) -> list[Check]:
    """The checks for profile ``p``, in report order."""
    venv = "pip install it into the hexvoice venv (/opt/hexvoice/venv)"
    checks: list[Check] = [
        Machine(
            "machine",
            p.machine,
            f"run on an {p.machine} machine, or pick the profile for this one "
            f"(--profile {', '.join(available())})",
        ),
        VersionAtLeast(
            "glibc",
            "glibc",
            p.min_glibc,
            glibc_version,
            f"use an image with glibc >= {show(p.min_glibc)} (Ubuntu 22.04 or newer); "
            f"the {p.qnn.flavour} QNN libraries need it",
        ),
        VersionAtLeast(
            "python",
            "Python",
            p.min_python,
            platform.python_version,
            f"install Python >= {show(p.min_python)} and re-run board/install.sh "
            f"--python pythonX.Y",
        ),
        VersionAtLeast(
            "numpy", "numpy", p.min_numpy, dist_version("numpy"), f"numpy: {venv}"
        ),
        QnnLibs("qnn-libs"),
        QnnFlavour("qnn-flavour"),
        QnnLoads("qnn-load"),
        QnnVersion("qnn-version"),
        QnnMemory("qnn-memory"),
    ]
    if p.qnn.skel_libs:
        checks += [AdspPath("adsp-path"), HtpSkel("htp-skel")]
    if p.fastrpc:
        checks.append(
            LibraryLoads(
                "fastrpc-lib",
                p.fastrpc.library,
                p.fastrpc.library_dirs,
                f"{p.fastrpc.library} comes with the board's BSP, not QAIRT: install "
                f"the BSP's FastRPC userspace and put its directory on "
                f"LD_LIBRARY_PATH",
            )
        )
        if user:
            checks.append(
                DeviceAccess(
                    "device-access",
                    p.fastrpc.device_nodes,
                    user,
                    "QNN then fails with 'createUnsignedPD ... not supported' and "
                    "'openSessionForPriority failed 0x200'",
                )
            )
    if p.soc:
        checks.append(
            FileEquals(
                "soc-id",
                p.soc.sysfs_path,
                str(p.soc.soc_id),
                f"{p.name}",
                f"this profile is for {p.name} (soc_id {p.soc.soc_id}); another "
                f"HTP v{p.htp.arch} SoC may work with --ignore soc-id",
            )
        )
    checks += [
        FreeMemory("memory", _ram_need, "stop other services or use a smaller voice"),
        FreeDisk(
            "disk",
            lambda t: t.bundle_dir or t.path(p.install_prefix),
            _disk_need,
            "free disk space (journalctl --vacuum-size=100M, old voices)",
        ),
        BundleIntact("bundle"),
        BundleTarget("bundle-target"),
        NpuRun("npu-run"),
    ]
    return checks


def _ram_need(t: BoardTarget) -> tuple[int, str]:
    graphs = t.bundle_bytes(graphs_only=True)
    base = t.profile.free_ram_bytes
    if not graphs:
        return base, f"{base // _MIB} MiB for the host loop"
    return (
        base + CONTEXT_LOAD_FACTOR * graphs,
        f"{base // _MIB} MiB + {CONTEXT_LOAD_FACTOR} x {graphs // _MIB} MiB of graphs",
    )


def _disk_need(t: BoardTarget) -> tuple[int, str]:
    size, base = t.bundle_bytes(), t.profile.free_disk_bytes
    return base + size, f"{base // _MIB} MiB + room for a {size // _MIB} MiB bundle"


def _print_finding(f: Finding, out: TextIO) -> None:
    tag = _TAGS[f.level] + ("(ignored)" if f.ignored else "")
    out.write(f"{tag:<10} {f.check}: {f.message}\n")
    if f.fix and f.level in (WARNING, ERROR):
        out.write(f"{'':<10} fix: {f.fix}\n")
    out.flush()


def _say_slow(check: Check) -> None:
    if check.slow:
        print(f"... {check.name} (takes a while)", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hexvoice doctor", description="Check this machine before serving."
    )
    parser.add_argument(
        "--profile",
        default=default_profile(),
        help=f"one of {', '.join(available())} or a .yaml (default: this machine's)",
    )
    parser.add_argument("--bundle", type=Path, help="voice bundle directory to check")
    parser.add_argument("--root", type=Path, default=Path("/"), help="fake tree")
    parser.add_argument("--user", help="service user (default: the profile's)")
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="NAME",
        help="demote a check's errors to warnings (repeatable, comma lists, 'all')",
    )
    parser.add_argument("--json", action="store_true", help="JSON report on stdout")
    args = parser.parse_args(argv)
    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        parser.error(str(exc))
    user = args.user or profile.service_user
    checks = board_checks(profile, user)
    ignore = {n for arg in args.ignore for n in arg.split(",") if n}
    unknown = ignore - {c.name for c in checks} - {IGNORE_ALL}
    if unknown:
        parser.error(
            f"--ignore: unknown check(s) {sorted(unknown)}; this profile has "
            f"{', '.join(c.name for c in checks)}"
        )
    target = BoardTarget(
        root=args.root,
        profile=profile,
        bundle_dir=args.bundle,
        environ=dict(os.environ),
    )
    if (
        target.live
        and profile.adsp_library_path
        and "ADSP_LIBRARY_PATH" not in os.environ
    ):
        # FastRPC reads it when npu-run opens a session: test what the service gets.
        os.environ["ADSP_LIBRARY_PATH"] = profile.adsp_value
    out = sys.stdout
    report = None if args.json else (lambda f: _print_finding(f, out))
    findings = run_checks(
        checks, target, ignore, report, _say_slow if args.bundle else None
    )
    errors = sum(f.level == ERROR for f in findings)
    warnings = sum(f.level == WARNING for f in findings)
    if args.json:
        json.dump(
            {
                "profile": profile.name,
                "root": str(args.root),
                "bundle": str(args.bundle) if args.bundle else None,
                "user": user,
                "errors": errors,
                "warnings": warnings,
                "findings": [f.to_dict() for f in findings],
            },
            out,
            indent=2,
        )
        out.write("\n")
    else:
        out.write(f"\n{profile.name}: {errors} error(s), {warnings} warning(s)\n")
        if errors:
            out.write(
                "Fix the errors above, or demote a check you accept with "
                "--ignore NAME (--ignore all for every check).\n"
            )
    return 1 if errors else 0
