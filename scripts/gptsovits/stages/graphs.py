"""Stages ``export_t2s`` and ``export_vits``: the T2S graphs (fp32 for the CPU
backend and gates, and with float16 K/V for the NPU) and the two SoVITS
graphs, as static ONNX in the work dir."""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from daemon.engines.gptsovits import layout
from scripts.common.build.stage import Results
from scripts.gptsovits.export import graphs
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.pipeline.context import BuildContext

#: the exporter's names for the decode buckets, and the bundle's
EXPORT_DECODE_PREFIX = "t2s_decode_L"


def t2s_inputs(ctx: BuildContext) -> dict[str, Any]:
    return {"gpt": ctx.src.gpt_ckpt, "shapes": asdict(ctx.shapes)}


def t2s_outputs(ctx: BuildContext) -> list[Path]:
    keys = ctx.t2s_keys()
    return [ctx.onnx(k) for k in keys] + [ctx.npu_source(k) for k in keys]


def export_t2s(ctx: BuildContext, results: Results) -> None:
    model = ctx.loaded(T2SModel.load, ctx.src.gpt_ckpt)
    _t2s_into(ctx, model, ctx.onnx_dir, torch.float32)
    _t2s_into(ctx, model, ctx.npu_dir, torch.float16)


def _t2s_into(ctx: BuildContext, model: T2SModel, out: Path, kv: torch.dtype) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ctx.work) as tmp:
        for spec in graphs.export_t2s(model, ctx.shapes, Path(tmp), kv):
            name = spec.name.replace(EXPORT_DECODE_PREFIX, layout.T2S_DECODE_PREFIX)
            spec.path.replace(out / f"{name}.onnx")


def vits_inputs(ctx: BuildContext) -> dict[str, Any]:
    return {"sovits": ctx.src.sovits_pth, "shapes": asdict(ctx.shapes)}


def vits_outputs(ctx: BuildContext) -> list[Path]:
    return [ctx.onnx(layout.VITS_ENC), ctx.onnx(layout.VITS_GEN)]


def export_vits(ctx: BuildContext, results: Results) -> None:
    model = ctx.loaded(SovitsModel.load, ctx.src.sovits_pth)
    graphs.export_vits(model, ctx.shapes, ctx.onnx_dir)
