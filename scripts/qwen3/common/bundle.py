"""The bundle step the Qwen3 builds share: graphs, tables and voice.yaml into
the output directory, verified as ``hexvoice bundle verify`` does, then packed
as a .tar.  Each build's pipeline/finish.py names its engine, task, sample rate
and languages (and its layout)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from daemon.sdk.bundles.manifest import pack
from daemon.sdk.bundles.verify import verify_bundle
from daemon.sdk.capabilities import Task
from scripts.common import bundling, weight_sharing
from scripts.qwen3.common.workdir import WorkDir


class BuildError(RuntimeError):
    """The pipeline stopped; the message says where and why."""


def write_bundle(
    ctx: WorkDir,
    keys: Sequence[str],
    out: Path,
    tar: Path,
    results: dict[str, Any],
    with_onnx: bool,
    *,
    engine: str,
    name: str,
    sample_rate: int,
    languages: tuple[str, ...],
    target: str,
    task: Task,
) -> tuple[list[str], int]:
    """Write the bundle of graphs ``keys`` at ``out`` (replacing it) and
    ``tar``, with the fp32 graphs unless not ``with_onnx``; its params are
    ``results["tables"]["params"]``: (the problems ``verify_bundle`` finds,
    empty when sound; the number of files)."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(ctx.stage, out)
    placed = weight_sharing.placements(results["compile"], ctx.bin_dir)
    graphs = bundling.add_placed(
        out,
        {k: placed[k] for k in keys},
        {k: ctx.onnx(k) if with_onnx else None for k in keys},
    )
    sdks = {c["qnn_sdk"] for c in results["compile"].values()}
    bundle = bundling.finish(
        out,
        engine=engine,
        name=name,
        sample_rate=sample_rate,
        languages=languages,
        graphs=graphs,
        params=results["tables"]["params"],
        qnn_sdk=",".join(sorted(sdks)),
        target=target,
        task=task,
    )
    problems = verify_bundle(bundle)
    if not problems:
        pack(out, tar)
    return problems, len(bundle.files) + len(graphs) * (2 if with_onnx else 1)


def checked(problems: list[str], files: int) -> dict:
    """The bundle step's result, or BuildError naming what verify found."""
    if problems:
        raise BuildError("bundle verify failed: " + "; ".join(problems))
    return {"files": files}
