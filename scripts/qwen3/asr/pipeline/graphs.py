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
from scripts.qwen3.common.decoder_export import Step


@dataclass(frozen=True)
class Exported:
    """Each fp32 graph's size in bytes, by graph key."""

    bytes: dict[str, int]


def run(ctx: BuildContext, results: Results) -> Exported:
    export.export_encoder(ctx.model, ctx.onnx(layout.ENCODER))

    def fp32_and_npu(step: Step, n: int, key: str) -> None:
        export.export_text(ctx.model, step, n, ctx.onnx(key))
        export.export_text(ctx.model, step, n, ctx.npu_onnx(key), torch.float16)

    for p in ctx.prefill_buckets:
        fp32_and_npu("prefill", p, layout.prefill_key(p))
    for n in ctx.kv_buckets:
        fp32_and_npu("decode", n, layout.decode_key(n))
    return Exported({k: ctx.onnx(k).stat().st_size for k in ctx.graph_keys()})
