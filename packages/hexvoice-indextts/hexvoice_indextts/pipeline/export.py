"""Stages ``export`` and ``tables``.

``export``: every graph of the buckets as fp32 ONNX in the work dir's onnx/
(build/utterance_graphs.py, build/voice_graphs.py), the graphs the CPU
backend runs and the compiler reads.

``tables``: what the engine reads besides graphs, staged for the bundle:
cpu/tables.npz and cpu/voice_tables.npz (tables.py), the GPT's BPE
(text/bpe.model), the model's glossary when it has one (text/glossary.yaml,
read and checked first), and NeMo's compiled text-normalisation grammars for
the bundle's languages (text/nemo/), so no grammar is compiled where the
engine runs (minutes for English on a board).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from scripts.common.build.stage import Results

from hexvoice_indextts.build.utterance_graphs import (
    codec_file,
    export_utterance,
    utterance_tables,
    vocoder_snapshot,
)
from hexvoice_indextts.build.voice_graphs import export_voice, voice_tables
from hexvoice_indextts.model_dir.hub import CAMPPLUS, W2V_BERT, snapshot
from hexvoice_indextts.pipeline.context import BuildContext
from hexvoice_indextts.tables import TABLES_FILE, VOICE_TABLES_FILE
from hexvoice_indextts.text.normalize import GLOSSARY_FILE, Normalizer, read_glossary

BPE_FILE: Final = "text/bpe.model"
BUNDLE_GLOSSARY: Final = f"text/{GLOSSARY_FILE}"
GRAMMARS: Final = "text/nemo"


@dataclass(frozen=True)
class Exported:
    graphs: tuple[str, ...]


def model_files(ctx: BuildContext) -> dict[str, Path]:
    """Every file the graphs come from (hashed by content for the keys)."""
    md, hub = ctx.md, ctx.opts.hub
    return {
        "gpt": md.gpt, "s2mel": md.s2mel, "w2v_stat": md.w2v_stat,
        "w2v_bert": snapshot(hub, W2V_BERT), "codec": codec_file(hub),
        "campplus": snapshot(hub, CAMPPLUS), "vocoder": vocoder_snapshot(md, hub),
        "config": md.file("config.yaml"),
    }  # fmt: skip


def inputs(ctx: BuildContext) -> Mapping[str, Any]:
    o = ctx.opts
    return {
        **model_files(ctx),
        "utterance": asdict(o.utterance_buckets),
        "voice": asdict(o.voice_buckets),
    }


def outputs(ctx: BuildContext) -> Iterable[Path]:
    return [ctx.work.onnx(k) for k in ctx.graph_keys]


def run(ctx: BuildContext, results: Results) -> Exported:
    out = ctx.work.onnx_dir
    specs = export_utterance(ctx.md, ctx.opts.hub, ctx.opts.utterance_buckets, out)
    specs |= export_voice(ctx.md, ctx.opts.hub, ctx.opts.voice_buckets, out)
    missing = set(ctx.graph_keys) - set(specs)
    if missing:  # the names the runtime looks up are the exporters'
        raise RuntimeError(f"export: no graph(s) {sorted(missing)}")
    return Exported(tuple(k for k in ctx.graph_keys))


@dataclass(frozen=True)
class Tables:
    files: tuple[str, ...]
    glossary_terms: int


def tables_inputs(ctx: BuildContext) -> Mapping[str, Any]:
    md = ctx.md
    glossary = md.file(GLOSSARY_FILE)
    extra = {"glossary": glossary} if glossary.is_file() else {}
    return {
        **model_files(ctx), "bpe": md.bpe, "emo": md.file(md.config.emo_matrix),
        "spk": md.file(md.config.spk_matrix), "language": ctx.opts.language,
        "nemo": nemo_version(),
        "utterance": asdict(ctx.opts.utterance_buckets), **extra,
    }  # fmt: skip


def tables_outputs(ctx: BuildContext) -> Iterable[Path]:
    stage = ctx.work.stage
    return [stage / TABLES_FILE, stage / VOICE_TABLES_FILE, stage / BPE_FILE]


def languages(language: str) -> tuple[str, ...]:
    return ("zh", "en") if language == "auto" else (language,)


def _reuse_grammars(cache: Path | None, into: Path, lang: str) -> None:
    """NeMo's archives of ``lang`` from a cache of the same nemo version (it
    reads an archive that is there instead of compiling it)."""
    if cache is None:
        return
    into.mkdir(parents=True, exist_ok=True)
    for far in Path(cache).glob(f"{lang}_tn_*.far"):
        shutil.copyfile(far, into / far.name)


def nemo_version() -> str:
    from importlib.metadata import version

    return version("nemo-text-processing")


def run_tables(ctx: BuildContext, results: Results) -> Tables:
    md, stage = ctx.md, ctx.work.stage
    if stage.exists():
        shutil.rmtree(stage)
    utterance_tables(md, ctx.opts.hub, ctx.opts.utterance_buckets).save(
        stage / TABLES_FILE
    )
    voice_tables(md).save(stage / VOICE_TABLES_FILE)
    (stage / BPE_FILE).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(md.bpe, stage / BPE_FILE)
    terms = 0
    if md.file(GLOSSARY_FILE).is_file():
        terms = len(read_glossary(md.file(GLOSSARY_FILE)))  # refuses a bad one
        shutil.copyfile(md.file(GLOSSARY_FILE), stage / BUNDLE_GLOSSARY)
    ctx.log(
        "tables: compiling NeMo's text-normalisation grammars (minutes the first time)"
    )
    grammars = stage / GRAMMARS
    for lang in languages(ctx.opts.language):
        _reuse_grammars(ctx.opts.grammars, grammars, lang)
        Normalizer(grammars, lang).load()  # type: ignore[arg-type]
    files = sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())
    return Tables(tuple(files), terms)
