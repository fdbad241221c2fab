"""Stage ``bundle``: the bundle directory and its ``.tar`` (layout:
daemon/engines/gptsovits/layout.py) from the staged files, the compiled
binaries and their fp32 ONNX, verified as ``hexvoice bundle verify`` does."""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from daemon.engines.gptsovits import layout
from daemon.sdk.bundles.manifest import pack
from daemon.sdk.verify import verify_bundle
from scripts.common import bundling, weight_sharing
from scripts.common.build.compile import GROUP, compiled
from scripts.common.build.stage import Results
from scripts.gptsovits.pipeline.context import BuildContext
from scripts.gptsovits.shapes import SAMPLE_RATE
from scripts.gptsovits.stages.results import Bundled, Reference, Tables

LANGUAGES = ("zh", "en")
#: the stages whose results the bundle is made of
AFTER = ("tables", "refs", GROUP)


class BuildError(RuntimeError):
    """The pipeline stopped; the message says where and why."""


def inputs(ctx: BuildContext) -> dict[str, Any]:
    s = ctx.settings
    return {
        "stage": ctx.stage,
        "bins": ctx.bin_dir,
        "onnx": [ctx.onnx(key) for key in ctx.graph_keys()],
        # where (resolved: a relative --out names the same place), not what is
        # there (the bundle itself)
        "out": str(s.out.resolve()),
        "voice": s.voice,
        "target": s.target,
    }


def outputs(ctx: BuildContext) -> list[Path]:
    return [ctx.settings.out / "voice.yaml", ctx.settings.tar]


def bundle(ctx: BuildContext, results: Results) -> Bundled:
    tables: Tables = results["tables"]
    ref: Reference = results["refs"]
    units = compiled(results[GROUP])
    out, keys = ctx.settings.out, ctx.graph_keys()
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(ctx.stage, out)
    placed = weight_sharing.placements(
        {name: asdict(unit) for name, unit in units.items()}, ctx.bin_dir
    )
    graphs = bundling.add_placed(
        out, {k: placed[k] for k in keys}, {k: ctx.onnx(k) for k in keys}
    )
    voice = {
        "file": layout.ref_file(ctx.settings.voice),
        "clip": ref.clip,
        "text": ref.text,
        "lang": ref.lang,
        "prompt_semantic": ref.prompt_semantic,
    }
    made = bundling.finish(
        out,
        engine=layout.ENGINE_ID,
        name=ctx.src.exp,
        sample_rate=SAMPLE_RATE,
        languages=LANGUAGES,
        graphs=graphs,
        params=tables.params.to_dict(),
        voices={ctx.settings.voice: voice},
        qnn_sdk=",".join(sorted({unit.qnn_sdk for unit in units.values()})),
        target=ctx.settings.target,
    )
    problems = verify_bundle(made)
    if problems:
        raise BuildError("bundle verify failed: " + "; ".join(problems))
    pack(out, ctx.settings.tar)
    return Bundled(out, ctx.settings.tar, len(made.files) + 2 * len(graphs))
