"""The export stage: every graph as fp32 ONNX (the CPU backend's, the CPU
gates'), and the decoder graphs again with float16 K/V (compiled for the NPU,
scripts/qwen3/asr/export.py)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from daemon.engines.qwen3.asr import params as layout
from scripts.common.build.stage import Results
from scripts.qwen3.asr import export
from scripts.qwen3.asr.pipeline.context import BuildContext


@dataclass(frozen=True)
class Exported:
    """Each fp32 graph's size in bytes, by graph key."""

    bytes: dict[str, int]


def run(ctx: BuildContext, results: Results) -> Exported:
    export.export_encoder(ctx.model, ctx.onnx(layout.ENCODER))
    for p in ctx.prefill_buckets:
        key = layout.prefill_key(p)
        export.export_prefill(ctx.model, p, ctx.onnx(key))
        export.export_prefill(ctx.model, p, ctx.npu_onnx(key), torch.float16)
    for n in ctx.kv_buckets:
        key = layout.decode_key(n)
        export.export_decode(ctx.model, n, ctx.onnx(key))
        export.export_decode(ctx.model, n, ctx.npu_onnx(key), torch.float16)
    return Exported({k: ctx.onnx(k).stat().st_size for k in ctx.graph_keys()})
