"""Stage ``refs``: the voice's reference (``refs/<voice>.npz``) from its clip
in the training folder: phones and BERT features through the runtime's own
frontend and the exported bert graph, prompt semantic tokens, and ge / ge512
(averaged over ``--aux-ref`` clips); pipeline/refs.py and aux_refs.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.frontend import TextFrontend
from scripts.common.build.stage import Results
from scripts.gptsovits.export.bert import bert_inputs
from scripts.gptsovits.export.hubert import load_hubert
from scripts.gptsovits.export.ref_features import RefFeatures
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.pipeline import aux_refs
from scripts.gptsovits.pipeline.context import BuildContext
from scripts.gptsovits.pipeline.refs import reference_features
from scripts.gptsovits.pipeline.sources import (
    BERT_DIR,
    aux_ref_files,
    required_files,
)
from scripts.gptsovits.stages.results import Reference
from scripts.gptsovits.stages.text import head_files, resolver, vocab
from scripts.gptsovits.verify.cpu import cpu_session


def inputs(ctx: BuildContext) -> dict[str, Any]:
    src = ctx.src
    files = required_files(src.logs, src.ref_clip)
    bert = src.logs / BERT_DIR / f"{src.ref_clip}.pt"
    return {
        "files": files + ([bert] if bert.exists() else []),
        "aux_refs": aux_ref_files(src.logs, ctx.settings.aux_refs),
        "ref_text": ctx.settings.ref_text,
        "hubert": src.hubert_dir,  # exact prompt tokens (pipeline/refs.py)
        "sv": src.sv_ckpt,  # an aux reference's embedding (aux_refs.py)
        "gpt": src.gpt_ckpt,
        "sovits": src.sovits_pth,
        "text": ctx.text_dir,
        "onnx": [ctx.onnx(layout.BERT), ctx.onnx(layout.G2PW), *head_files(ctx)],
        "prefill_len": ctx.shapes.prefill_len,
    }


def outputs(ctx: BuildContext) -> list[Path]:
    return [ctx.ref_path()]


def refs(ctx: BuildContext, results: Results) -> Reference:
    src = ctx.src
    sovits = ctx.loaded(SovitsModel.load, src.sovits_pth)
    aux = aux_refs.styles(src.logs, ctx.settings.aux_refs, sovits, src.sv_ckpt)
    ref, measured = aux_refs.with_aux(_features(ctx, sovits), aux, sovits)
    if len(ref.phones) + len(ref.prompt) >= ctx.shapes.prefill_len:
        raise ValueError(
            f"reference {ref.name}: {len(ref.phones)} phones + {len(ref.prompt)} "
            f"prompt tokens leave no room in the prefill (P="
            f"{ctx.shapes.prefill_len}); choose a shorter reference clip"
        )
    ref.save(ctx.ref_path())
    return Reference(
        clip=ref.name,
        text=ref.text,
        lang=ref.lang,
        prompt_semantic=ref.prompt_semantic,
        ref_seconds=round(ref.seconds, 2),
        phones=len(ref.phones),
        prompt=len(ref.prompt),
        training_bert_rel_err=ref.training_bert_rel_err,
        **measured,
    )


def _features(ctx: BuildContext, sovits: SovitsModel) -> RefFeatures:
    src, tokens = ctx.src, ctx.shapes.bert_tokens
    bert = cpu_session(ctx.onnx(layout.BERT))

    def bert_rows(ids: list[int]) -> np.ndarray:
        (hidden,) = bert(bert_inputs(ids, tokens))
        return hidden[0, : len(ids)]

    # chinese-hubert-base for exact prompt tokens (--hubert), else None
    hubert = ctx.loaded(load_hubert, src.hubert_dir) if src.hubert_dir else None
    return reference_features(
        src.logs,
        src.ref_clip,
        sovits,
        TextFrontend(resolver(ctx)),
        vocab(ctx),
        bert_rows,
        ctx.loaded(T2SModel.load, src.gpt_ckpt).dims.bert_dim,
        ctx.settings.ref_text,
        hubert=hubert,
    )
