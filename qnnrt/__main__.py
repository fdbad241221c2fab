"""``python -m qnnrt info FILE.bin [--json]``: what a context binary holds (every
graph: a binary may hold several)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .binary import BinaryInfo, read_binary_info
from .c._lib import load_library
from .c.errors import QnnError, QnnLibraryError


def _human(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def format_info(info: BinaryInfo) -> str:
    """Human-readable report, in the spirit of the SDK's context-binary utility."""
    lines = [
        f"{info.path}  ({_human(info.size)})",
        f"  built by QNN {info.build_id}  core API {info.core_api_version}  "
        f"backend API {info.backend_api_version}  blob {info.context_blob_version}",
        f"  target: soc_model {info.soc_model or '-'}  dsp_arch "
        f"{'v' + str(info.dsp_arch) if info.dsp_arch else '-'}  "
        f"spill-fill {_human(info.spill_fill_bytes)}",
        f"  {len(info.graphs)} graph(s): {', '.join(g.name for g in info.graphs)}",
    ]
    for g in info.graphs:
        lines.append(f"  graph {g.name}")
        lines.append(
            f"    vtcm {_human(g.vtcm_bytes)}  io {_human(g.io_bytes)}  "
            f"const {_human(g.const_bytes)}  shared weights "
            f"{_human(g.shared_weights_bytes)}  spill-fill {_human(g.spill_fill_bytes)}"
        )
        for kind, tensors in (("in ", g.inputs), ("out", g.outputs)):
            for i, t in enumerate(tensors):
                q = (
                    f"  scale={t.quantization.scale:g} offset={t.quantization.offset}"
                    if t.quantization
                    else ""
                )
                lines.append(
                    f"    {kind}[{i}] {t.name:<24} id={t.id:<4} {t.dtype_name:<16} "
                    f"{list(t.shape)}{q}"
                )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qnnrt")
    sub = parser.add_subparsers(dest="command", required=True)
    info_p = sub.add_parser("info", help="print a context binary's graphs and tensors")
    info_p.add_argument("binaries", nargs="+", metavar="FILE.bin")
    info_p.add_argument("--json", action="store_true", help="machine-readable output")
    info_p.add_argument("--lib-dir", help="directory of libQnnHtp.so/libQnnSystem.so")
    args = parser.parse_args(argv)
    try:
        lib = load_library(args.lib_dir)
    except QnnLibraryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    infos, failed = [], 0
    for path in args.binaries:
        try:
            infos.append(read_binary_info(path, lib))
        except (OSError, ValueError, QnnError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            failed += 1
    if args.json:
        out = [i.to_dict() for i in infos]
        json.dump(
            out[0] if len(args.binaries) == 1 and out else out, sys.stdout, indent=2
        )
        sys.stdout.write("\n")
    else:
        print("\n".join(format_info(i) for i in infos))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
