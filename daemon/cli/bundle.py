"""``hexvoice bundle verify DIR|FILE.tar`` (``verify_bundle``: the check ``serve``
runs at start and ``hexvoice doctor --bundle`` reports) and ``hexvoice bundle
info DIR``."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from daemon.sdk.bundles.manifest import Bundle, BundleError, unpack
from daemon.sdk.verify import verify_bundle


def _open(path: Path, tmp: str) -> Bundle:
    if path.is_file() and path.suffix == ".tar":
        return Bundle.load(unpack(path, Path(tmp) / "bundle"))
    return Bundle.load(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hexvoice bundle")
    sub = parser.add_subparsers(dest="action", required=True)
    v = sub.add_parser(
        "verify",
        help="check hashes, each binary's I/O and HTP target, and that the "
        "manifest has every graph its engine runs",
    )
    v.add_argument("bundle", type=Path, help="bundle directory or .tar")
    v.add_argument(
        "--no-binaries",
        action="store_true",
        help="hashes and the engine's graphs only (no QNN libraries needed)",
    )
    i = sub.add_parser("info", help="print the manifest summary")
    i.add_argument("bundle", type=Path, help="bundle directory or .tar")
    i.add_argument("--json", action="store_true", help="the whole manifest as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hexvoice-bundle-") as tmp:
        try:
            bundle = _open(args.bundle, tmp)
        except BundleError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.action == "info":
            if args.json:
                print(json.dumps(bundle.to_dict(), indent=2))
            else:
                print(
                    f"{bundle.name}: engine {bundle.engine} ({bundle.task}), "
                    f"{bundle.sample_rate} Hz, "
                    f"languages {', '.join(bundle.languages)}, QNN {bundle.qnn_sdk}, "
                    f"target {bundle.target}"
                )
                for key, g in bundle.graphs.items():
                    ins = ", ".join(f"{t.name}{list(t.shape)}" for t in g.inputs)
                    where = g.file + (f" [{g.graph}]" if g.graph else "")
                    print(f"  {key:<14} {where}  ({ins})")
            return 0
        problems = verify_bundle(bundle, binaries=not args.no_binaries)
    for p in problems:
        print(f"FAIL {p}")
    n_files = len(bundle.binaries) + len(bundle.files)
    print(
        f"{args.bundle}: {'OK' if not problems else f'{len(problems)} problem(s)'} "
        f"({n_files} files, {len(bundle.graphs)} graphs)"
    )
    return 1 if problems else 0
