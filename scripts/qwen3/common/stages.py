"""The stages every Qwen3 build declares alike, and the run of a declaration.

A Qwen3 build is export, gates_cpu, tables, the compile group, gates_sim and
bundle (docs/builds.md); the first three and the gates are the model's own,
the compile group and the bundle stage's keys are the same for every build:

- ``compile_stages()``: one stage per binary of each graph's NPU ONNX
  (``Qwen3Context.npu_onnx``), for --target, with a per-graph copy for the
  simulator gates when they run on a weight-sharing target;
- ``bundle_stage(run)``: ``run`` writes the bundle (common/bundle.py
  ``write``); keyed by the staged files, the binaries, the fp32 graphs, the
  name, target and --no-onnx, reading the compile group's and the tables'
  results;
- ``sim_gates_on``: the ``when`` of gates_sim (--sim-gates, or --target
  simulator);
- ``cached_build``: a declaration's bundle in the one bundle cache
  (scripts/common/build/cache.py), for tests, demos and benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scripts.common.build import cache
from scripts.common.build.compile import GROUP, CompilePlan, compile_group
from scripts.common.build.run import Declared, StageRun, run_stages
from scripts.common.build.stage import Results, Stage, StageGroup
from scripts.qwen3.common.bundle import Bundled
from scripts.qwen3.common.context import Qwen3Context

BUNDLE = "bundle"


def _plan(ctx: Qwen3Context) -> CompilePlan:
    return CompilePlan(
        {k: ctx.npu_onnx(k) for k in ctx.graph_keys()},
        ctx.bin_dir,
        ctx.opts.target,
        ctx.opts.qnn_cache,
        gated=ctx.opts.run_sim_gates,
    )


def compile_stages() -> StageGroup[Any]:
    return compile_group(_plan)


def sim_gates_on(ctx: Qwen3Context) -> bool:
    return ctx.opts.run_sim_gates


def _bundle_inputs(ctx: Qwen3Context) -> dict[str, Any]:
    return {
        "stage": ctx.stage,
        "bins": ctx.bin_dir,
        "onnx": ctx.onnx_dir,
        "name": ctx.name,
        "target": ctx.opts.target,
        "with_onnx": ctx.opts.onnx,
        "out": str(ctx.opts.out),
    }


def bundle_stage(
    run: Callable[[Any, Results], Bundled], after: tuple[str, ...] = ("tables",)
) -> Stage[Any]:
    """The bundle stage: ``run`` reads the compile group's results and those
    of the stages ``after`` names."""
    return Stage(
        BUNDLE,
        run,
        Bundled,
        inputs=_bundle_inputs,
        outputs=lambda ctx: ctx.bundle_outputs(),
        after=(GROUP, *after),
    )


@dataclass(frozen=True)
class Built:
    """What one build made, and what each stage did."""

    bundle: Path
    tar: Path
    run: StageRun


def run_build(stages: Sequence[Declared], ctx: Qwen3Context) -> Built:
    """Run (or resume) ``stages`` in the context's work dir."""
    run = run_stages(stages, ctx, ctx.work)
    return Built(ctx.opts.out, ctx.opts.tar, run)


def cache_key(build: Callable[..., Built], files: Iterable[Path], opts: Any) -> str:
    """What can change the bundle: the code of the declaration that defines
    ``build`` (all it can run), the model ``files``, the options (their paths
    left out) and the toolchain."""
    return cache.content_key([build.__module__], files, cache.key_options(opts))


def cached_build(
    build: Callable[[Any], Built],
    files: Iterable[Path],
    model_dir: Path,
    root: Path,
    opts: Any,
) -> tuple[Path, Built | None]:
    """(bundle dir, what the build made, or None when the cache had it):
    ``build(opts)`` with its model ``model_dir`` (whose files are ``files``)
    and its out and work dirs under ``root/<key>``."""

    def make(out: Path, work: Path) -> Built:
        return build(replace(opts, model=Path(model_dir), out=out, work=work))

    return cache.cached_build(root, cache_key(build, files, opts), make)
