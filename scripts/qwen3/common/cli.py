"""What the Qwen3 builds' command lines share (build-qwen3-asr,
build-qwen3-tts): the target and bucket checks, comma-separated lists, the
output and gate flags, the options from the parsed flags, and the run that
prints the summary or one ``error:`` line (``command``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import TypeVar

from scripts.common.build import report
from scripts.common.build.run import StageRun
from scripts.common.qnn_compile import TARGETS
from scripts.qwen3.common.stages import Built

Opts = TypeVar("Opts")
N = TypeVar("N", int, float)


def check_target_and_buckets(
    target: str, prefill_buckets: tuple[int, ...], kv_buckets: tuple[int, ...]
) -> None:
    """ValueError naming the flag when the target or a bucket list is wrong."""
    if target not in TARGETS:
        raise ValueError(f"--target must be one of {sorted(TARGETS)}")
    for flag, sizes in (
        ("--prefill-buckets", prefill_buckets),
        ("--kv-buckets", kv_buckets),
    ):
        if not sizes or min(sizes) < 1:
            raise ValueError(f"{flag}: expected positive sizes, found {sizes}")
    if max(kv_buckets) <= max(prefill_buckets):
        raise ValueError(
            f"--kv-buckets: the largest ({max(kv_buckets)}) must exceed the "
            f"largest prefill bucket ({max(prefill_buckets)}): decoding "
            "continues after the prompt"
        )


def comma_list(
    cast: Callable[[str], N], what: str, example: str
) -> Callable[[str], tuple[N, ...]]:
    """An argparse type for comma-separated values (``what``, e.g. "sizes",
    and ``example`` in its error)."""

    def parse(text: str) -> tuple[N, ...]:
        try:
            return tuple(cast(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {what}, e.g. {example}; found {text!r}"
            ) from None

    return parse


def add_output_args(p: argparse.ArgumentParser) -> None:
    """--name, --work, --qnn-cache and --sim-gates / --no-sim-gates."""
    p.add_argument("--name", help="bundle name (default: the model dir's name)")
    p.add_argument("--work", type=Path, help="work dir (default: OUT.work)")
    p.add_argument("--qnn-cache", type=Path, help="content-keyed compile cache")
    sim = p.add_mutually_exclusive_group()
    sim.add_argument(
        "--sim-gates",
        action="store_true",
        default=None,
        help="run the simulator gates (default for --target simulator)",
    )
    sim.add_argument("--no-sim-gates", dest="sim_gates", action="store_false")


def add_no_onnx(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-onnx",
        dest="onnx",
        action="store_false",
        help="leave the fp32 graphs (onnx/, the CPU backend) out of the bundle",
    )


def options(cls: Callable[..., Opts], args: argparse.Namespace) -> Opts:
    """``cls`` (an options dataclass) from the parsed flags of its fields' names."""
    return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


def command(
    build: Callable[[Opts], Built],
    opts: Opts,
    errors: tuple[type[Exception], ...],
    graphs: Callable[[StageRun], list[tuple[str, ...]]],
    notes: Callable[[StageRun], list[str]] | None = None,
) -> int:
    """Build ``opts``: the stage table, the ``graphs`` rows, the build's
    ``notes`` lines (e.g. what a stage measured) and the bundle's paths on
    stdout (0), or one ``error:`` line on stderr for any of ``errors`` (1)."""

    try:
        done = build(opts)
    except errors as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report.summary(done.run, graphs(done.run)))
    if notes:
        print("\n".join(notes(done.run)))
    print(f"bundle: {done.bundle}\ntar:    {done.tar}")
    return 0
