"""The opt-in w8a16 code predictor stage (``--cp-weights w8a16``).

Calibration feeds are the ones the engine gives cp_step on a real prompt:
the gate trajectory's frames (upstream's greedy run of a fixed text,
pipeline/trajectory.py) driven through the NPU's cp_step graph (fp16 K/V) on
the CPU, recorded; scripts/qwen3/tts/quant.py (parity-bench's) makes the QDQ
model, compiled like any graph (the context's ``npu_onnx`` names it for
cp_step).  The simulator gate then reports the quantized predictor's top-1
against fp32 without stopping the build: the option stays opt-in until its
parity holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.engines.qwen3.tts import params as layout
from scripts.common.build.runners import cpu_runner
from scripts.common.build.stage import Results
from scripts.qwen3.tts import quant
from scripts.qwen3.tts.graphs import gates
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.trajectory import gate_inputs

NAME = f"quant {layout.CP_STEP}"


@dataclass(frozen=True)
class Quantized:
    """The calibration feeds recorded, the QDQ graph's and the fp16 one's bytes."""

    feeds: int
    bytes: int
    fp16_bytes: int


def on(ctx: BuildContext) -> bool:
    return ctx.opts.quantized


def inputs(ctx: BuildContext) -> dict[str, Any]:
    return ctx.keyed(onnx=ctx.kv16_onnx(layout.CP_STEP))


def outputs(ctx: BuildContext) -> list[Path]:
    return [ctx.quant_path()]


def run(ctx: BuildContext, results: Results) -> Quantized:
    src = ctx.kv16_onnx(layout.CP_STEP)
    x = gate_inputs(ctx)
    rec = quant.FeedRecorder(cpu_runner(src))
    rows = gates.predictor_rows(ctx.model, x.hidden, x.codes)
    gates.predictor_graph(ctx.model, rec, rows)
    out = quant.quantize_cp_step(src, rec.feeds, ctx.quant_path())
    return Quantized(len(rec.feeds), out.stat().st_size, src.stat().st_size)
