"""The Qwen3 builds' summary table: one row per graph (bucket, binary size,
compile time, its CPU and simulator gates, simulator seconds per call), from
the step results every build records the same way (``compile``,
``gates_cpu.gates``, ``gates_sim.gates`` / ``.seconds``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

#: (how a metric starts, its short name, the digits that tell values apart)
Short = Sequence[tuple[str, str, str]]
HEADER: Final = ("graph", "bucket", "bin MB", "compile s", "CPU gate", "sim gate",
                 "sim s/call")  # fmt: skip
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


def gates(entries: list[Mapping[str, Any]] | None, short: Short) -> str:
    """A graph's gates as ``name value`` pairs, each its worst value."""
    if not entries:
        return "-"
    seen: dict[str, tuple[float, str]] = {}
    for e in entries:  # a graph gated in several pairs: its worst value
        name, digits = next(
            ((n, d) for start, n, d in short if e["metric"].startswith(start)),
            (e["metric"], ".4g"),
        )
        worst = min if e["at_least"] else max
        value = worst(seen.get(name, (e["value"], ""))[0], e["value"])
        seen[name] = (value, digits)
    return " ".join(f"{k} {v:{d}}" for k, (v, d) in seen.items())


def bucket(key: str) -> str:
    tail = key.rsplit("_", 1)[-1]
    return tail if tail.isdigit() else "-"


def rows(results: Mapping[str, Any], short: Short) -> list[tuple[str, ...]]:
    """The table's rows (header first) from the build's step results."""
    comp = results.get("compile", {})
    cpu = results.get("gates_cpu", {}).get("gates", {})
    sim = results.get("gates_sim", {})
    secs = sim.get("seconds", {})
    out = [HEADER]
    for key, c in comp.items():
        out.append(
            (
                key,
                bucket(key),
                f"{c.get('bytes', 0) / 1e6:.2f}",
                f"{c['compile_seconds']:.1f}" if c.get("compile_seconds") else "-",
                gates(cpu.get(key), short),
                gates(sim.get("gates", {}).get(key), short) if sim else "not run",
                f"{secs[key]:.3f}" if key in secs else "-",
            )
        )
    return out


def aligned(table: Sequence[Sequence[str]]) -> list[str]:
    """Rows as left-aligned columns."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in table]


def summary(results: Mapping[str, Any], short: Short) -> str:
    """The table as aligned text, plus a total line."""
    lines = aligned(rows(results, short))
    total = sum(c.get("bytes", 0) for c in results.get("compile", {}).values())
    lines.append(f"total binaries: {total / 1e6:.2f} MB")
    return "\n".join(lines)
