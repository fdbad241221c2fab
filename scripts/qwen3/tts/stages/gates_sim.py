"""The simulator gates stage: the compiled binaries on the x86 HTP simulator
against the fp32 graphs on the CPU backend (scripts/qwen3/asr/gates.py
``sim_gate``), on a few steps of the gate trajectory (pipeline/trajectory.py),
one predictor frame, every codec window whole (graphs/codec_sim.py: the
simulator takes seconds per frame, so a build may list fewer,
``--sim-codec-windows``) and each speaker bucket at one clip length.

A w8a16 cp_step (``--cp-weights w8a16``) is measured and reported, not gated:
the option is opt-in until its parity holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from daemon.engines.qwen3.tts import params as layout
from scripts.common.build.runners import Simulator, cpu_runner
from scripts.common.build.stage import Results
from scripts.common.sim_gate import sim_gate
from scripts.qwen3.tts.graphs import codec_sim, gates, speaker_gate
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.trajectory import GateInputs, gate_inputs
from scripts.qwen3.tts.stages.gating import Gates, record, renamed

#: teacher-forced talker steps on the simulator, and predictor frames
SIM_STEPS: Final = 4
SIM_FRAMES: Final = 1


@dataclass(frozen=True)
class SimGates:
    """The simulator gates' results, and each graph's mean seconds per call."""

    gates: Gates
    seconds: dict[str, float] = field(default_factory=dict)


def inputs(ctx: BuildContext) -> dict[str, Any]:
    codec = list(ctx.opts.sim_codec_frames)
    cp = ctx.opts.cp_weights
    return ctx.keyed(bins=ctx.bin_dir, onnx=ctx.onnx_dir, cp_weights=cp, codec=codec)


def run(ctx: BuildContext, results: Results) -> SimGates:
    x = gate_inputs(ctx)
    done = SimGates({})
    sim = Simulator()
    try:
        _text_proj(ctx, sim, x, done)
        _talker(ctx, sim, x, done)
        _predictor(ctx, sim, x, done)
        for t in ctx.opts.sim_codec_frames:
            key = layout.codec_key(t)
            runner = sim.runner(ctx.bin_path(key), key)
            cpu = cpu_runner(ctx.onnx(key))
            book = ctx.src.predictor.vocab_size
            record(done.gates, [key], codec_sim.sim_codec_gate(runner, cpu, book))
            _seconds(done, key, runner)
        for f in ctx.xvector_buckets:  # one clip length per bucket
            key = layout.speaker_key(f)
            runner = sim.runner(ctx.bin_path(key), key)
            cpu = cpu_runner(ctx.onnx(key))
            gate, report = speaker_gate.sim_gates(
                ctx.model, runner, cpu, x.mel, f, ctx.xvector_buckets
            )
            record(done.gates, [key], gate)
            record(done.gates, [key], report, fatal=False)
            _seconds(done, key, runner)
    finally:
        sim.close()
    return done


def _text_proj(
    ctx: BuildContext, sim: Simulator, x: GateInputs, done: SimGates
) -> None:
    key = layout.TEXT_PROJ
    runner = sim.runner(ctx.bin_path(key), key)
    ids = np.asarray(x.text)
    feeds = _text_rows(ctx.model, runner, ids)
    got, ref = (
        r.run(feeds)[r.output_index["y"]][: len(ids)]
        for r in (runner, cpu_runner(ctx.onnx(key)))
    )
    record(done.gates, [key], sim_gate("text_proj", [ref], [got], False))
    _seconds(done, key, runner)


def _talker(ctx: BuildContext, sim: Simulator, x: GateInputs, done: SimGates) -> None:
    """The smallest prefill and KV buckets, a few steps."""
    p, n = min(ctx.prefill_buckets), min(ctx.kv_buckets)
    keys = [layout.talker_prefill_key(p), layout.talker_decode_key(n)]
    runners = sim.open({k: ctx.bin_path(k) for k in keys})
    steps = x.steps[: min(SIM_STEPS, n - len(x.prompt))]
    m = ctx.model
    got, _ = gates.talker_graphs(m, *(runners[k] for k in keys), x.prompt, steps)
    cpu = [cpu_runner(ctx.onnx(k)) for k in keys]
    ref, _ = gates.talker_graphs(m, *cpu, x.prompt, steps)
    record(done.gates, keys, sim_gate("talker", [ref], [got]))
    for k in keys:
        _seconds(done, k, runners[k])


def _predictor(
    ctx: BuildContext, sim: Simulator, x: GateInputs, done: SimGates
) -> None:
    key = layout.CP_STEP
    runner = sim.runner(ctx.bin_path(key), key)
    m = ctx.model
    rows = gates.predictor_rows(m, x.hidden[:SIM_FRAMES], x.codes[:SIM_FRAMES])
    got = gates.predictor_graph(m, runner, rows)
    ref = gates.predictor_graph(m, cpu_runner(ctx.onnx(key)), rows)
    res = sim_gate("predictor", [ref], [got])
    quantized = ctx.opts.quantized
    if quantized:
        res = [renamed(r, "w8a16, reported") for r in res]
    record(done.gates, [key], res, fatal=not quantized)
    _seconds(done, key, runner)


def _text_rows(model: Any, runner: Any, ids: np.ndarray) -> dict[str, np.ndarray]:
    emb = model.talker.model.text_embedding.weight.detach().float().numpy()
    rows = runner.inputs[0].shape[0]
    x = np.zeros((rows, emb.shape[1]), np.float32)
    x[: len(ids)] = emb[ids]
    return {"x": x}


def _seconds(done: SimGates, key: str, runner: Any) -> None:
    """Mean simulator seconds per call of ``key`` (the summary's last column)."""
    if runner.stats.calls:
        done.seconds[key] = round(runner.stats.seconds / runner.stats.calls, 4)
