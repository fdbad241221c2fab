"""What the Qwen3-ASR and Qwen3-TTS full-size benches share: the bytes a
weight or activation takes, the bandwidth a step is priced at, parameter
counting on upstream's modules, the calibration table, and the command-line
options of both."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

#: the LPDDR5X bandwidth to price a step at (QCS8550 peak)
BANDWIDTH_BPS: Final = 64e9
FP16: Final = 2
FP32: Final = 4
INT8: Final = 1
#: the board the calibration compiles are for (its v73 binaries)
TARGET: Final = "qcs8550"


def mrope_section(head_dim: int) -> list[int]:
    """M-RoPE sections of a Qwen3 decoder: they sum to head_dim / 2
    (docs/qwen3.md, tiny models)."""
    half = head_dim // 2
    return [half - 2 * (half // 3), half // 3, half // 3]


def numel(*modules: Any) -> int:
    """Parameters of ``modules``, each shared tensor counted once."""
    seen = {id(q): q.numel() for mod in modules for q in mod.parameters()}
    return sum(seen.values())


def print_calibration(
    title: str, calib: Mapping[str, tuple[int, int, float]], width: int
) -> None:
    """One row per compiled graph: parameters, binary bytes, bytes per
    parameter and the compile's seconds."""
    print(f"\ncalibration compiles ({title}; random weights)")
    print(f"{'graph':<{width}}{'params':>14}{'bin bytes':>16}{'B/param':>9}{'s':>7}")
    for name, (params, nbytes, secs) in calib.items():
        print(
            f"{name:<{width}}{params:>14,}{nbytes:>16,}{nbytes / params:>9.4f}"
            f"{secs:>7.1f}"
        )


def option_parser(
    prog: str, work: Path, quick: str, no_compile: str
) -> argparse.ArgumentParser:
    """A bench's parser with ``--backend --quick --work --qnn-cache --target
    --no-compile`` (``quick``, ``no_compile``: what those two leave out)."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--backend", nargs="+", default=["cpu", "qnn"])
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument(
        "--work", type=Path, default=work, help="exports kept here between runs"
    )
    parser.add_argument("--qnn-cache", type=Path, default=None)
    parser.add_argument("--target", default=TARGET)
    parser.add_argument("--no-compile", action="store_true", help=no_compile)
    return parser


def host_runs(
    args: argparse.Namespace, count: int, quick_count: int, runs: int
) -> tuple[list[str], int, int, Path]:
    """What the host timing runs: (backends, steps or frames per run, runs, work
    dir). --quick: the CPU backend, at most ``quick_count``, one run, WORK/quick;
    else --backend, ``count`` and ``runs`` in WORK/full."""
    if args.quick:
        return ["cpu"], min(count, quick_count), 1, args.work / "quick"
    return args.backend, count, runs, args.work / "full"
