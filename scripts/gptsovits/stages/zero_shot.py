"""Stages ``export_reference`` and ``gates_reference`` (``--hubert DIR --sv
CKPT``): the four reference-side graphs of a zero-shot bundle, what voice
cloning runs on; compiled and bundled with the other graphs.

    hubert, ssl_quant   export/hubert.py      (gates: verify/hubert.py)
    ref_enc, sv         export/reference.py   (gates: verify/reference.py)

The bundle then carries ``params.reference`` (their static sizes, tables.py)
and the engine declares ``Capabilities.cloning``
(daemon/engines/gptsovits/cloning/clone.py).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from daemon.engines.gptsovits import layout
from scripts.common.build.stage import Results
from scripts.gptsovits.export.hubert import export_hubert, load_hubert
from scripts.gptsovits.export.reference import export_reference as export_style
from scripts.gptsovits.models.eres2net import load_sv_checkpoint
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.pipeline.context import BuildContext
from scripts.gptsovits.shapes import ReferenceShapes
from scripts.gptsovits.stages.results import ReferenceGraphs
from scripts.gptsovits.verify.hubert import gate_hubert_cpu
from scripts.gptsovits.verify.reference import gate_reference_cpu


def zero_shot(ctx: BuildContext) -> bool:
    return ctx.reference is not None


def _asked(ctx: BuildContext) -> tuple[Path, Path, ReferenceShapes]:
    """--hubert, --sv and the graphs' shapes."""
    hubert, sv, shapes = ctx.src.hubert_dir, ctx.src.sv_ckpt, ctx.reference
    if hubert is None or sv is None or shapes is None:
        raise ValueError("the reference graphs need --hubert and --sv")
    return hubert, sv, shapes


def inputs(ctx: BuildContext) -> dict[str, Any]:
    hubert, sv, shapes = _asked(ctx)
    return {
        "hubert": hubert,
        "sv": sv,
        "sovits": ctx.src.sovits_pth,
        "shapes": asdict(shapes),
    }


def outputs(ctx: BuildContext) -> list[Path]:
    return [ctx.onnx(key) for key in ctx.reference_keys()]


def gate_inputs(ctx: BuildContext) -> dict[str, Any]:
    return {**inputs(ctx), "onnx": outputs(ctx)}


def export_reference(ctx: BuildContext, results: Results) -> ReferenceGraphs:
    hubert_dir, sv_ckpt, shapes = _asked(ctx)
    sovits = ctx.loaded(SovitsModel.load, ctx.src.sovits_pth)
    hubert = ctx.loaded(load_hubert, hubert_dir)
    sv = ctx.loaded(load_sv_checkpoint, sv_ckpt)
    ctx.onnx_dir.mkdir(parents=True, exist_ok=True)
    specs = export_hubert(hubert, sovits, shapes, ctx.onnx_dir)
    specs += export_style(sovits, sv, shapes, ctx.onnx_dir)
    made = {spec.path.stem for spec in specs}
    if made != set(ctx.reference_keys()):
        raise ValueError(f"reference export made {sorted(made)}, not {outputs(ctx)}")
    return ReferenceGraphs(sovits.dims.sv, shapes.hubert_samples)


def gates_reference(ctx: BuildContext, results: Results) -> dict[str, float]:
    hubert_dir, sv_ckpt, shapes = _asked(ctx)
    sovits = ctx.loaded(SovitsModel.load, ctx.src.sovits_pth)
    hubert = ctx.loaded(load_hubert, hubert_dir)
    sv = ctx.loaded(load_sv_checkpoint, sv_ckpt)
    rp = shapes.params(sovits.dims.sv)
    hub, quant = ctx.onnx(layout.HUBERT), ctx.onnx(layout.SSL_QUANT)
    out = dict(gate_hubert_cpu(hubert, sovits, hub, quant, rp))
    ref_enc, sv_onnx = ctx.onnx(layout.REF_ENC), ctx.onnx(layout.SV)
    out.update(gate_reference_cpu(sovits, sv, ref_enc, sv_onnx, rp))
    return out
