"""Stage ``bundle``: the indextts2 bundle written from the work dir: the
binaries and fp32 graphs (scripts/common/bundling.py), the staged CPU tables
and text files, the engine's params (engine/params.py) and the manifest,
which records the accepted licence.  Staged beside ``out`` and renamed into
place when complete; a rerun replaces the bundle this work dir made."""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from scripts.common import bundling
from scripts.common.build.compile import GROUP, compiled
from scripts.common.build.stage import Results

from hexvoice_indextts.engine.params import ENGINE_ID, LANGUAGES
from hexvoice_indextts.pipeline.context import BuildContext
from hexvoice_indextts.pipeline.export import languages
from hexvoice_indextts.utterance import SAMPLE_RATE

MADE: Final = bundling.MADE
made_here = bundling.made_here


@dataclass(frozen=True)
class Bundled:
    root: Path
    graphs: int
    binaries: int
    bytes: int


def inputs(ctx: BuildContext) -> Mapping[str, Any]:
    o = ctx.opts
    return {
        "stage": ctx.work.stage, "name": o.name, "target": o.target,
        "license": ctx.accepted, "language": o.language,
        "utterance": asdict(o.utterance_buckets), "voice": asdict(o.voice_buckets),
        "out": str(o.out),
    }  # fmt: skip


def outputs(ctx: BuildContext) -> Iterable[Path]:
    return [ctx.opts.out / "voice.yaml", ctx.work.work / MADE]


def run(ctx: BuildContext, results: Results) -> Bundled:
    out = ctx.opts.out
    bundling.write_staged(out, ctx.work.work, lambda root: _write(root, ctx, results))
    files = [p for p in out.rglob("*") if p.is_file()]
    return Bundled(
        out, len(ctx.graph_keys), len(compiled(results[GROUP])),
        sum(p.stat().st_size for p in files),
    )  # fmt: skip


def _write(root: Path, ctx: BuildContext, results: Results) -> None:
    o = ctx.opts
    binaries = compiled(results[GROUP])
    (sdk,) = {b.qnn_sdk for b in binaries.values()}
    placed = {}
    for unit, binary in binaries.items():
        for key, graph in (binary.graphs or {unit: None}).items():
            placed[key] = (ctx.work.bin_path(unit), graph)
    keys = ctx.graph_keys
    specs = bundling.add_placed(
        root, {k: placed[k] for k in keys}, {k: ctx.work.onnx(k) for k in keys}
    )
    shutil.copytree(ctx.work.stage, root, dirs_exist_ok=True)
    langs = languages(o.language)
    params = {
        "utterance": asdict(o.utterance_buckets),
        "voice": asdict(o.voice_buckets),
        "language": None if o.language == "auto" else o.language,
    }
    bundling.finish(
        root,
        engine=ENGINE_ID,
        name=o.name,
        sample_rate=SAMPLE_RATE,
        languages=tuple(lang for lang in LANGUAGES if lang in langs),
        graphs=specs,
        params=params,
        qnn_sdk=sdk,
        target=o.target,
        license=ctx.accepted,
    )
