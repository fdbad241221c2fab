"""Stage ``gates_sim`` (simulator gates on): every compiled graph on the x86
HTP simulator, through qnnrt, against its fp32 ONNX on onnxruntime CPU on the
same static inputs (verify/sim.py; the reference graphs' verify/hubert.py and
verify/reference.py).  On a weight-sharing target the gates run the per-graph
copies the compile group adds (the simulator cannot load shared binaries).
The result: per graph its metric, value and seconds per simulator call."""

from __future__ import annotations

from typing import Any

from daemon.engines.gptsovits import layout
from scripts.common.build.runners import Simulator
from scripts.common.build.stage import Results
from scripts.gptsovits.export.ref_features import RefFeatures
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.pipeline.context import BuildContext
from scripts.gptsovits.shapes import ReferenceShapes
from scripts.gptsovits.stages.text import resolver, vocab
from scripts.gptsovits.verify import sim as sim_verify
from scripts.gptsovits.verify import text as text_verify
from scripts.gptsovits.verify.hubert import gate_hubert_sim
from scripts.gptsovits.verify.reference import gate_reference_sim
from scripts.gptsovits.verify.sim import SimResult


def enabled(ctx: BuildContext) -> bool:
    return ctx.settings.sim_gates


def inputs(ctx: BuildContext) -> dict[str, Any]:
    return {"bins": ctx.bin_dir, "refs": ctx.ref_path(), "onnx": ctx.onnx_dir}


def gates_sim(ctx: BuildContext, results: Results) -> dict[str, SimResult]:
    sim = Simulator()
    try:
        res = _text(ctx, sim)
        res.update(_speech(ctx, sim))
        if ctx.reference is not None:
            res.update(_reference(ctx, sim, ctx.reference))
    finally:
        sim.close()
    return res


def _text(ctx: BuildContext, sim: Simulator) -> dict[str, SimResult]:
    ref, words, tokens = _ref(ctx), vocab(ctx), ctx.shapes.bert_tokens
    ids = [words.cls, *words.encode(ref.text), words.sep][:tokens]
    bert = sim_verify.gate_bert(
        sim, ctx.bin_path(layout.BERT), ctx.onnx(layout.BERT), ids, tokens
    )
    g2pw = resolver(ctx)
    _, queries = g2pw.queries(text_verify.G2PW_SENTENCES)
    feeds = next(g2pw.batches(queries)).feeds
    onnx = ctx.onnx(layout.G2PW)
    return {
        layout.BERT: bert,
        layout.G2PW: sim_verify.gate_g2pw(sim, ctx.bin_path(layout.G2PW), onnx, feeds),
    }


def _speech(ctx: BuildContext, sim: Simulator) -> dict[str, SimResult]:
    ref, s = _ref(ctx), ctx.shapes
    t2s = ctx.loaded(T2SModel.load, ctx.src.gpt_ckpt)
    sovits = ctx.loaded(SovitsModel.load, ctx.src.sovits_pth)
    prefill = ctx.bin_path(layout.T2S_PREFILL)
    decode = {n: ctx.bin_path(layout.t2s_decode_key(n)) for n in s.kv_buckets}
    res = sim_verify.gate_t2s(sim, t2s, prefill, decode, s, ref)
    enc, gen = layout.VITS_ENC, layout.VITS_GEN
    res.update(
        sim_verify.gate_vits(
            sim,
            sovits,
            ctx.bin_path(enc),
            ctx.onnx(enc),
            ctx.bin_path(gen),
            ctx.onnx(gen),
            s,
            ref,
        )
    )
    return res


def _reference(
    ctx: BuildContext, sim: Simulator, shapes: ReferenceShapes
) -> dict[str, SimResult]:
    sovits = ctx.loaded(SovitsModel.load, ctx.src.sovits_pth)
    rp = shapes.params(sovits.dims.sv)
    bins = {k: ctx.bin_path(k) for k in ctx.reference_keys()}
    hub, quant = ctx.onnx(layout.HUBERT), ctx.onnx(layout.SSL_QUANT)
    res = dict(gate_hubert_sim(sim, bins, hub, quant, rp, sovits))
    ref_enc, sv = ctx.onnx(layout.REF_ENC), ctx.onnx(layout.SV)
    res.update(gate_reference_sim(sim, bins, ref_enc, sv, rp))
    return res


def _ref(ctx: BuildContext) -> RefFeatures:
    return ctx.loaded(RefFeatures.load, ctx.ref_path(), ctx.src.ref_clip)
