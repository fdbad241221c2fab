"""Stage ``tables``: the bundle's CPU side (``cpu/*.npy``: embeddings,
positions, the T2S predict layer, the codebook; export/cpu_tables.py), its
text resources (``text/``: the BERT vocabulary and g2pW's char tables), and
the manifest's ``params`` that describe them and every graph's sizes."""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from daemon.engines.gptsovits import layout
from scripts.common.build.stage import Results
from scripts.gptsovits.export.cpu_tables import TABLE_FILES, write_tables
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.pipeline.context import BuildContext
from scripts.gptsovits.pipeline.sources import G2PW_FILES
from scripts.gptsovits.shapes import MASK_VALUE, NOISE_SCALE
from scripts.gptsovits.stages.results import Tables

# Upstream sampling defaults and EOS rule (docs/gpt-sovits.md, T2S sampling; T2S
# stopping).
TOP_K, TOP_P, TEMPERATURE, REPETITION_PENALTY = 15, 1.0, 1.0, 1.35
EOS_BLOCK_STEPS = 11
VOCAB = "vocab.txt"
#: g2pW's files the runtime reads (all but the model, which is split)
G2PW_TEXT = G2PW_FILES[1:]
#: params named as the T2S dims (T2SDims) and as the graph shapes (GraphShapes)
T2S_PARAMS = ("layers", "heads", "head_dim", "vocab", "eos", "phone_vocab", "bert_dim")
SHAPE_PARAMS = tuple(
    "prefill_len kv_buckets max_new_tokens vits_frames vits_phones gen_window "
    "gen_overlap bert_tokens g2pw_rows g2pw_tokens".split()
)


def inputs(ctx: BuildContext) -> dict[str, Any]:
    return {
        "gpt": ctx.src.gpt_ckpt,
        "sovits": ctx.src.sovits_pth,
        "text": [ctx.src.bert_dir / VOCAB, *(ctx.src.g2pw_dir / n for n in G2PW_TEXT)],
        "shapes": asdict(ctx.shapes),
        "reference": asdict(ctx.reference) if ctx.reference else None,
    }


def outputs(ctx: BuildContext) -> list[Path]:
    return [ctx.stage / rel for rel in TABLE_FILES] + [
        ctx.text_dir / name for name in (VOCAB, *G2PW_TEXT)
    ]


def tables(ctx: BuildContext, results: Results) -> Tables:
    t2s = ctx.loaded(T2SModel.load, ctx.src.gpt_ckpt)
    sovits = ctx.loaded(SovitsModel.load, ctx.src.sovits_pth)
    write_tables(ctx.stage, t2s, sovits)
    ctx.text_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ctx.src.bert_dir / VOCAB, ctx.text_dir / VOCAB)
    for name in G2PW_TEXT:
        shutil.copyfile(ctx.src.g2pw_dir / name, ctx.text_dir / name)
    return Tables(params(ctx, t2s, sovits))


def params(ctx: BuildContext, t2s: T2SModel, sovits: SovitsModel) -> layout.GsvParams:
    t, v, s = t2s.dims, sovits.dims, ctx.shapes
    return layout.GsvParams(
        width=t.dim,
        **{name: getattr(t, name) for name in T2S_PARAMS},
        **{name: getattr(s, name) for name in SHAPE_PARAMS},
        vits_hidden=v.hidden,
        ssl_dim=v.ssl,
        gin=v.gin,
        hop=v.hop,
        noise_scale=NOISE_SCALE,
        mask_value=MASK_VALUE,
        top_k=TOP_K,
        top_p=TOP_P,
        temperature=TEMPERATURE,
        repetition_penalty=REPETITION_PENALTY,
        eos_block_steps=EOS_BLOCK_STEPS,
        reference=ctx.reference.params(v.sv) if ctx.reference else None,
    )
