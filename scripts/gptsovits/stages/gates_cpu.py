"""Stage ``gates_cpu``: every exported graph of the six kinds on onnxruntime
CPU against the torch modules cast to float64, bounded by their own float32
(verify/cpu.py, verify/text.py); the T2S graphs also with float16 K/V as the
NPU keeps them.  A failed gate stops the build naming graph, metric and
threshold.  The result: each measured value by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daemon.engines.gptsovits import layout
from scripts.common.build.stage import Results
from scripts.gptsovits.export.bert import load_bert
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.pipeline.context import BuildContext
from scripts.gptsovits.stages.text import G2PW_ONNX, head_files, resolver, vocab
from scripts.gptsovits.verify import cpu as verify
from scripts.gptsovits.verify import text as text_verify

#: the float16-K/V T2S gates' names: their fp32 twins' with this prefix
KV16 = "kv16_"
KINDS = (layout.G2PW, layout.BERT, layout.VITS_ENC, layout.VITS_GEN)


def graphs(ctx: BuildContext) -> list[Path]:
    """The ONNX files the gates read."""
    t2s = ctx.t2s_keys()
    return [*(ctx.onnx(k) for k in (*t2s, *KINDS)), *(ctx.npu_source(k) for k in t2s)]


def inputs(ctx: BuildContext) -> dict[str, Any]:
    return {
        "onnx": [*graphs(ctx), *head_files(ctx)],
        "gpt": ctx.src.gpt_ckpt,
        "sovits": ctx.src.sovits_pth,
        "bert": ctx.src.bert_dir,
        "g2pw": ctx.src.g2pw_dir / G2PW_ONNX,
    }


def gates_cpu(ctx: BuildContext, results: Results) -> dict[str, float]:
    t2s = ctx.loaded(T2SModel.load, ctx.src.gpt_ckpt)
    sovits = ctx.loaded(SovitsModel.load, ctx.src.sovits_pth)
    s, buckets = ctx.shapes, ctx.shapes.kv_buckets
    decode = {n: ctx.onnx(layout.t2s_decode_key(n)) for n in buckets}
    npu = {n: ctx.npu_source(layout.t2s_decode_key(n)) for n in buckets}
    out = verify.gate_t2s(t2s, ctx.onnx(layout.T2S_PREFILL), decode, s)
    kv16 = verify.gate_t2s(t2s, ctx.npu_source(layout.T2S_PREFILL), npu, s)
    out.update({f"{KV16}{k}": v for k, v in kv16.items()})
    out.update(verify.gate_vits_enc(sovits, ctx.onnx(layout.VITS_ENC), s))
    out.update(verify.gate_vits_gen(sovits, ctx.onnx(layout.VITS_GEN), s))
    bert = ctx.loaded(load_bert, ctx.src.bert_dir)
    bert_onnx = ctx.onnx(layout.BERT)
    out.update(text_verify.gate_bert(bert, bert_onnx, vocab(ctx), s.bert_tokens))
    g2pw = ctx.src.g2pw_dir / G2PW_ONNX
    out.update(text_verify.gate_g2pw(g2pw, resolver(ctx)))
    return out
