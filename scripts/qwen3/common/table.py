"""The Qwen3 builds' per-graph summary rows: one row per binary (bucket,
size, compile time, its CPU and simulator gates, simulator seconds per call)
and a total, below the stage table (scripts/common/build/report.py).
``graph_rows`` / ``run_rows`` read the stages' typed results."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from scripts.common.build.compile import GROUP, Compiled, compiled
from scripts.common.build.run import StageRun
from scripts.common.gate_result import GateResult

#: (how a metric starts, its short name, the digits that tell values apart)
Short = Sequence[tuple[str, str, str]]
HEADER: Final = (
    "graph",
    "bucket",
    "bin MB",
    "compile s",
    "CPU gate",
    "sim gate",
    "sim s/call",
)
#: the short names of the gates every Qwen3 build runs (a build appends its
#: own; a metric takes the first entry it starts with: most specific first)
SHORT: Final = (
    ("rel error", "rel", ".2g"),
    ("teacher-forced argmax agreement (fp16 K/V)", "argmax16", ".3g"),
    ("teacher-forced argmax agreement vs float64 (fp16 K/V)", "argmax16", ".3g"),
    ("teacher-forced argmax", "argmax", ".3g"),
    ("simulator cosine", "cos", ".6f"),
    ("simulator top-1", "top1", ".3g"),
)


def cell(gates: Iterable[GateResult] | None, short: Short = SHORT) -> str:
    """A graph's gates as ``name value`` pairs, each its worst value."""
    seen: dict[str, tuple[float, str]] = {}
    for g in gates or ():  # a graph gated in several pairs: its worst value
        name, digits = next(
            ((n, d) for start, n, d in short if g.metric.startswith(start)),
            (g.metric, ".4g"),
        )
        worst = min if g.at_least else max
        value = worst(seen.get(name, (g.value, ""))[0], g.value)
        seen[name] = (value, digits)
    return " ".join(f"{k} {v:{d}}" for k, (v, d) in seen.items()) or "-"


def graph_rows(
    compiled: Mapping[str, Compiled],
    cpu: Mapping[str, Sequence[GateResult]],
    sim: Mapping[str, Sequence[GateResult]] | None,
    seconds: Mapping[str, float],
    short: Short = SHORT,
) -> list[tuple[str, ...]]:
    """The per-graph rows (header first, the total binaries' size last) from
    the bundle's binaries by unit, the CPU gates and the simulator gates
    (None: not run) by graph key, and the simulator's seconds per call."""
    out = [HEADER]
    for key, c in compiled.items():
        out.append(
            (
                key,
                bucket(key),
                f"{c.bytes / 1e6:.2f}",
                f"{c.compile_seconds:.1f}" if c.compile_seconds else "-",
                cell(cpu.get(key), short),
                cell(sim.get(key), short) if sim is not None else "not run",
                f"{seconds[key]:.3f}" if key in seconds else "-",
            )
        )
    total = sum(c.bytes for c in compiled.values())
    out.append(("total", "", f"{total / 1e6:.2f}", "", "", "", ""))
    return out


def run_rows(run: StageRun, short: Short = SHORT) -> list[tuple[str, ...]]:
    """``graph_rows`` of a build's run: its compile group's binaries, the
    ``gates`` (by graph key) of its gates_cpu and gates_sim results and
    gates_sim's ``seconds``."""
    cpu, sim = run.results.get("gates_cpu"), run.results.get("gates_sim")
    return graph_rows(
        compiled(run.results[GROUP]),
        cpu.gates if cpu else {},
        sim.gates if sim else None,
        sim.seconds if sim else {},
        short,
    )


def bucket(key: str) -> str:
    tail = key.rsplit("_", 1)[-1]
    return tail if tail.isdigit() else "-"
