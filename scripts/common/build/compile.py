"""The compile stages every build declares: one ``compile <unit>`` stage per
context binary (a graph, or on a weight-sharing target a group of graphs with
the same weights, scripts/common/weight_sharing.py), keyed by the ONNX files,
the target and the compile code.

A build declares ``compile_group(plan)``: the binaries are planned from the
exported graphs when the run reaches the group.  Each stage's result is a
:class:`Compiled`; ``compiled(results["compile"])`` gives the bundle's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.common import weight_sharing
from scripts.common.build.stage import Results, Stage, StageGroup
from scripts.common.onnx_data import model_files
from scripts.common.qnn_compile import CompileError, qnn_sdk_version
from scripts.common.weight_sharing import Unit

PREFIX = "compile "
#: characters of the compiler's own message kept after an explanation (its
#: onnxruntime traceback runs to pages)
_QUOTED = 300


@dataclass(frozen=True)
class Compiled:
    """One compiled binary: seconds (None on a compile-cache hit), the QNN
    SDK, its size, and graph key -> its graph name in the binary (None: the
    binary's only graph)."""

    compile_seconds: float | None
    qnn_sdk: str
    bytes: int
    graphs: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class CompilePlan:
    """What to compile: graph key -> ONNX, for ``target``, into ``bin_dir``."""

    sources: Mapping[str, Path]
    bin_dir: Path
    target: str
    cache_dir: Path | None = None
    #: also a binary per grouped graph (``bins/<key>.bin``) for the simulator
    #: gates (the simulator cannot load weight-shared binaries)
    gated: bool = False
    #: ``explain(onnx, target)``: what in a graph the compiler refused (e.g.
    #: the op and node), for the error; run only when a compile fails
    explain: Callable[[Path, str], str] | None = None


def _compile(unit: Unit, plan: CompilePlan) -> Callable[[Any, Results], Compiled]:
    def run(ctx: Any, results: Results) -> Compiled:
        try:
            done = weight_sharing.compile_unit(
                unit, plan.sources, plan.bin_dir, plan.target, plan.cache_dir
            )
        except CompileError as exc:
            if plan.explain is None:
                raise
            why = "; ".join(
                f"{k}: {plan.explain(plan.sources[k], plan.target)}" for k in unit.keys
            )
            raise CompileError(f"{why}; {str(exc).strip()[:_QUOTED]}") from exc
        return Compiled(**done)

    run.__module__ = __name__  # keyed by this module's imports (the compiler)
    return run


def units(plan: CompilePlan) -> tuple[tuple[Unit, ...], tuple[Unit, ...]]:
    """(the bundle's binaries, the extra per-graph copies for the gates)."""
    planned = weight_sharing.plan(plan.sources, plan.target)
    copies = tuple(Unit(k, (k,)) for u in planned if u.shared for k in u.keys)
    return planned, copies if plan.gated else ()


def compile_stages(plan: CompilePlan) -> list[Stage[Any]]:
    """One stage per binary, in plan order (the gate copies last)."""
    planned, copies = units(plan)
    sdk = qnn_sdk_version()
    stages = []
    for unit in (*planned, *copies):
        onnx = [model_files(plan.sources[k]) for k in unit.keys]
        inputs = {
            "onnx": onnx if unit.shared else onnx[0],
            "target": plan.target,
            # another QNN SDK makes other binaries (docs/builds.md, keys)
            "qnn_sdk": sdk,
        }
        stages.append(
            Stage(
                f"{PREFIX}{unit.name}",
                _compile(unit, plan),
                Compiled,
                inputs=lambda ctx, inputs=inputs: inputs,
                outputs=lambda ctx, unit=unit: [plan.bin_dir / f"{unit.name}.bin"],
            )
        )
    return stages


GROUP = "compile"


def compile_group(plan: Callable[[Any], CompilePlan]) -> StageGroup[Any]:
    """The ``compile`` group: ``plan(ctx)`` says what to compile (until the
    graphs are planned, the progress lines count one binary per graph)."""
    return StageGroup(
        GROUP,
        lambda ctx: compile_stages(plan(ctx)),
        expect=lambda ctx: len(plan(ctx).sources),
    )


def compiled(group: Mapping[str, Compiled]) -> dict[str, Compiled]:
    """The bundle's binaries by unit name, from the group's results (the gate
    copies, compiled last, are left out)."""
    out = {}
    for name, result in group.items():
        unit = name.removeprefix(PREFIX)
        if not any(unit in c.graphs and len(c.graphs) > 1 for c in group.values()):
            out[unit] = result
    return out
