"""The opt-in w8a16 code predictor step (``--cp-weights w8a16``).

Calibration feeds are the ones the engine gives cp_step on a real prompt:
the gate trajectory's frames (upstream's greedy run of a fixed text,
pipeline/trajectory.py) driven through the NPU's cp_step graph (fp16 K/V) on
the CPU, recorded; scripts/qwen3/tts/quant.py (parity-bench's) makes the QDQ
model, compiled like any graph.  The simulator gate then reports the
quantized predictor's top-1 against fp32 without stopping the build: the
option stays opt-in until its parity holds.
"""

from __future__ import annotations

from typing import Any

from daemon.engines.qwen3.tts import params as layout
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.trajectory import gate_inputs


def quantize(ctx: BuildContext) -> dict[str, Any]:
    from scripts.common.build.runners import cpu_runner
    from scripts.qwen3.tts import quant
    from scripts.qwen3.tts.graphs import gates

    src = ctx.npu_onnx(layout.CP_STEP)
    x = gate_inputs(ctx)
    rec = quant.FeedRecorder(cpu_runner(src))
    gates.predictor_graph(ctx.model, rec, gates.predictor_rows(ctx.model, x.hidden,
                                                               x.codes))  # fmt: skip
    out = quant.quantize_cp_step(src, rec.feeds, ctx.quant_path())
    return {"feeds": len(rec.feeds), "bytes": out.stat().st_size,
            "fp16_bytes": src.stat().st_size}  # fmt: skip
