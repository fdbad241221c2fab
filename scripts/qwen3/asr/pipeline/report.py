"""build_asr's summary table: one row per graph (bucket, binary size, compile
time, its CPU and simulator gates, simulator seconds per call)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: short names of the gates' metrics in the table, by how the metric starts
#: (most specific first), with the digits that tell the values apart
_SHORT: Final = (
    ("rel error", "rel", ".2g"),
    ("teacher-forced argmax agreement (fp16 K/V)", "argmax16", ".3g"),
    ("teacher-forced argmax", "argmax", ".3g"),
    ("simulator cosine", "cos", ".6f"),
    ("simulator top-1", "top1", ".3g"),
)
HEADER: Final = ("graph", "bucket", "bin MB", "compile s", "CPU gate", "sim gate",
                 "sim s/call")  # fmt: skip


def _gates(entries: list[Mapping[str, Any]] | None) -> str:
    if not entries:
        return "-"
    seen: dict[str, tuple[float, str]] = {}
    for e in entries:  # a graph gated in several pairs: its worst value
        name, digits = next(
            ((n, d) for start, n, d in _SHORT if e["metric"].startswith(start)),
            (e["metric"], ".4g"),
        )
        worst = min if e["at_least"] else max
        value = worst(seen.get(name, (e["value"], ""))[0], e["value"])
        seen[name] = (value, digits)
    return " ".join(f"{k} {v:{d}}" for k, (v, d) in seen.items())


def _bucket(key: str) -> str:
    tail = key.rsplit("_", 1)[-1]
    return tail if tail.isdigit() else "-"


def rows(results: Mapping[str, Any]) -> list[tuple[str, ...]]:
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
                _bucket(key),
                f"{c.get('bytes', 0) / 1e6:.2f}",
                f"{c['compile_seconds']:.1f}" if c.get("compile_seconds") else "-",
                _gates(cpu.get(key)),
                _gates(sim.get("gates", {}).get(key)) if sim else "not run",
                f"{secs[key]:.3f}" if key in secs else "-",
            )
        )
    return out


def summary(results: Mapping[str, Any]) -> str:
    """The table as aligned text, plus a total line."""
    table = rows(results)
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in table]
    total = sum(c.get("bytes", 0) for c in results.get("compile", {}).values())
    lines.append(f"total binaries: {total / 1e6:.2f} MB")
    return "\n".join(lines)
