"""The ``compile`` group: one stage per context binary.  The local QNN EP
compile is the framework's (scripts/common/build/compile.py: a binary per
graph, or per group of graphs with the same weights on a weight-sharing
target, and per-graph copies for the simulator gates); ``--compiler aihub``
compiles each graph on Qualcomm AI Hub instead (export/aihub.py), a binary
per graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.common.build.compile import (
    GROUP,
    PREFIX,
    Compiled,
    CompilePlan,
    compile_stages,
)
from scripts.common.build.stage import Results, Stage, StageGroup
from scripts.common.onnx_data import model_files
from scripts.gptsovits.export.aihub import compile_aihub
from scripts.gptsovits.pipeline.context import BuildContext

LOCAL, AIHUB = "local", "aihub"
COMPILERS = (LOCAL, AIHUB)
#: AI Hub's binaries report this in place of a QNN SDK version
AIHUB_SDK = "aihub"


def plan(ctx: BuildContext) -> CompilePlan:
    sources = {key: ctx.npu_source(key) for key in ctx.graph_keys()}
    s = ctx.settings
    return CompilePlan(sources, ctx.bin_dir, s.target, s.qnn_cache, s.sim_gates)


def stages(ctx: BuildContext) -> list[Stage[Any]]:
    if ctx.settings.compiler == AIHUB:
        return [_aihub_stage(ctx, key) for key in ctx.graph_keys()]
    return compile_stages(plan(ctx))


def group() -> StageGroup[Any]:
    return StageGroup(GROUP, stages)


def _aihub_stage(ctx: BuildContext, key: str) -> Stage[Any]:
    source, target = ctx.npu_source(key), ctx.settings.target

    def run(ctx: BuildContext, results: Results) -> Compiled:
        dest = compile_aihub(source, ctx.bin_dir, key, target)
        return Compiled(None, AIHUB_SDK, dest.stat().st_size, {key: None})

    inputs = {"onnx": model_files(source), "target": target, "compiler": AIHUB}
    out: list[Path] = [ctx.bin_path(key)]
    return Stage(
        f"{PREFIX}{key}",
        run,
        Compiled,
        inputs=lambda ctx: inputs,
        outputs=lambda ctx: out,
    )
