"""Stage ``export_text``: the two text graphs, ``bert`` (chinese-roberta's
first layers, export/bert.py) and ``g2pw`` (g2pW's BERT body cut out of
upstream's ONNX file; its head goes to ``cpu/`` as tables, export/g2pw.py).
Also the text-side helpers the later stages share: the BERT vocabulary and
the runtime's g2pW resolver over the exported body."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.frontend import CharVocab, G2pwResolver
from daemon.engines.gptsovits.frontend.zh.g2pw import G2PW_ROWS, G2PW_TOKENS, HEAD_FILES
from scripts.common.build.stage import Results
from scripts.gptsovits.export.bert import export_bert, load_bert
from scripts.gptsovits.export.g2pw import split_g2pw
from scripts.gptsovits.pipeline.context import BuildContext
from scripts.gptsovits.stages.results import TextGraphs
from scripts.gptsovits.verify.text import g2pw_resolver

G2PW_ONNX = "g2pW.onnx"


def inputs(ctx: BuildContext) -> dict[str, Any]:
    return {
        "bert": ctx.src.bert_dir,
        "g2pw": ctx.src.g2pw_dir,
        "shapes": asdict(ctx.shapes),
    }


def head_files(ctx: BuildContext) -> list[Path]:
    return [ctx.cpu_dir / f"{layout.G2PW_HEAD_PREFIX}{n}.npy" for n in HEAD_FILES]


def outputs(ctx: BuildContext) -> list[Path]:
    return [ctx.onnx(layout.BERT), ctx.onnx(layout.G2PW), *head_files(ctx)]


def export_text(ctx: BuildContext, results: Results) -> TextGraphs:
    fixed = (G2PW_ROWS, G2PW_TOKENS)
    if (ctx.shapes.g2pw_rows, ctx.shapes.g2pw_tokens) != fixed:
        raise ValueError(f"the runtime feeds g2pw {fixed} rows x tokens")
    s = ctx.shapes
    bert = ctx.loaded(load_bert, ctx.src.bert_dir)
    export_bert(bert, s.bert_tokens, s.bert_layers, ctx.onnx(layout.BERT))
    head = split_g2pw(
        ctx.src.g2pw_dir / G2PW_ONNX,
        ctx.onnx(layout.G2PW),
        ctx.cpu_dir,
        s.g2pw_rows,
        s.g2pw_tokens,
        layout.G2PW_HEAD_PREFIX,
    )
    return TextGraphs(int(head.cls_w.shape[0]))


def vocab(ctx: BuildContext) -> CharVocab:
    return ctx.loaded(CharVocab, ctx.src.bert_dir / "vocab.txt")


def resolver(ctx: BuildContext) -> G2pwResolver:
    """The runtime's g2pW resolver over the exported body (CPU)."""
    g2pw = ctx.onnx(layout.G2PW)
    return ctx.loaded(g2pw_resolver, ctx.src.g2pw_dir, vocab(ctx), ctx.cpu_dir, g2pw)
