"""The export stage: every graph as fp32 ONNX (the CPU backend's, the CPU
gates'), the talker and predictor again with float16 K/V (compiled for the
NPU), and the codec at upstream's chunk (+ context) for its CPU gate
(scripts/qwen3/tts/graphs/export.py)."""

from __future__ import annotations

from dataclasses import dataclass

from daemon.engines.qwen3.tts import params as layout
from scripts.common.build.stage import Results
from scripts.qwen3.tts.graphs import export
from scripts.qwen3.tts.pipeline.context import TEXT_ROWS, BuildContext
from scripts.qwen3.tts.pipeline.options import UPSTREAM_FRAMES


@dataclass(frozen=True)
class Exported:
    """Each fp32 graph's size in bytes, by graph key."""

    bytes: dict[str, int]


def run(ctx: BuildContext, results: Results) -> Exported:
    import torch

    m, f16, codec = ctx.model, torch.float16, ctx.codec.model
    export.export_text_proj(m, TEXT_ROWS, ctx.onnx(layout.TEXT_PROJ))
    for p in ctx.prefill_buckets:
        key = layout.talker_prefill_key(p)
        export.export_talker_prefill(m, p, ctx.onnx(key))
        export.export_talker_prefill(m, p, ctx.kv16_onnx(key), f16)
    for n in ctx.kv_buckets:
        key = layout.talker_decode_key(n)
        export.export_talker_decode(m, n, ctx.onnx(key))
        export.export_talker_decode(m, n, ctx.kv16_onnx(key), f16)
    export.export_cp_step(m, ctx.onnx(layout.CP_STEP))
    export.export_cp_step(m, ctx.kv16_onnx(layout.CP_STEP), f16)
    for t in ctx.codec_frames:
        export.export_codec(codec, t, ctx.onnx(layout.codec_key(t)))
    export.export_codec(codec, UPSTREAM_FRAMES, ctx.gate_codec())
    for f in ctx.xvector_buckets:
        export.export_speaker(m, f, ctx.onnx(layout.speaker_key(f)))
    return Exported({k: ctx.onnx(k).stat().st_size for k in ctx.graph_keys()})
