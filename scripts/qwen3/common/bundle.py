"""The bundle stage the Qwen3 builds share: graphs, tables and voice.yaml into
the output directory, verified as ``hexvoice bundle verify`` does, then packed
as a .tar.  Each build's bundle stage names its engine, task, sample rate,
languages and params (``Manifest``); ``write`` does the rest from the work dir
and the compile stages' results."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from daemon.sdk.bundles.manifest import GraphSpec, pack
from daemon.sdk.capabilities import Task
from daemon.sdk.verify import verify_bundle
from scripts.common import bundling, weight_sharing
from scripts.common.build.compile import Compiled
from scripts.qwen3.common.context import Qwen3Context


class BuildError(RuntimeError):
    """The pipeline stopped; the message says where and why."""


@dataclass(frozen=True)
class Manifest:
    """What voice.yaml says besides its graphs, files and target."""

    engine: str
    task: Task
    sample_rate: int
    #: the codes clients see (the engine's capabilities), e.g. "en", "zh"
    languages: tuple[str, ...]
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Bundled:
    """The bundle stage's result: how many files the bundle holds."""

    files: int


def write(
    ctx: Qwen3Context, compiled: Mapping[str, Compiled], manifest: Manifest
) -> Bundled:
    """The bundle of every graph of ``ctx`` at its --out (replaced) and .tar,
    from the bundle's binaries ``compiled`` (by unit name), with the fp32
    graphs unless --no-onnx; BuildError naming what verify finds."""
    keys = ctx.graph_keys()
    placed = weight_sharing.placements(
        {name: asdict(c) for name, c in compiled.items()}, ctx.bin_dir
    )
    problems, files = _write(
        ctx.opts.out,
        ctx.opts.tar,
        ctx.stage,
        {k: placed[k] for k in keys},
        {k: ctx.onnx(k) if ctx.opts.onnx else None for k in keys},
        {c.qnn_sdk for c in compiled.values()},
        engine=manifest.engine,
        name=ctx.name,
        sample_rate=manifest.sample_rate,
        languages=manifest.languages,
        params=manifest.params,
        target=ctx.opts.target,
        task=manifest.task,
    )
    if problems:
        raise BuildError("bundle verify failed: " + "; ".join(problems))
    return Bundled(files)


def _write(
    out: Path,
    tar: Path,
    stage: Path,
    placed: Mapping[str, tuple[Path, str | None]],
    onnx: Mapping[str, Path | None],
    sdks: set[str],
    **manifest: Any,
) -> tuple[list[str], int]:
    """The staged files, the ``placed`` graphs (key -> binary, graph name)
    with their ``onnx`` (None: left out) and voice.yaml into ``out``, packed
    as ``tar`` when it verifies: (the problems found; the number of files)."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(stage, out)
    graphs: dict[str, GraphSpec] = bundling.add_placed(out, placed, onnx)
    bundle = bundling.finish(
        out, graphs=graphs, qnn_sdk=",".join(sorted(sdks)), **manifest
    )
    problems = verify_bundle(bundle)
    if not problems:
        pack(out, tar)
    onnx_files = sum(path is not None for path in onnx.values())
    return problems, len(bundle.files) + len(graphs) + onnx_files
