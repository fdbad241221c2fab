"""The CPU gates stage: every fp32 graph on the CPU backend against upstream
(scripts/qwen3/tts/graphs/gates.py), on the gate trajectory
(pipeline/trajectory.py).

text_proj; every (prefill, decode) pair covering each bucket, fp32 (rel
error, argmax, h) and with the NPU's fp16 K/V (argmax); cp_step
teacher-forced on every frame (fp32 and fp16 K/V); every codec window at two
lengths (full and right-padded) and codec_325 in upstream's 300 + 25 chunking
against upstream's ``decode`` (each against upstream cast to float64, bound by
upstream float32's own SNR there, scripts/common/floor.py), and the fp16 range
of every tensor of every codec window (graphs/codec_sim.py); every speaker
bucket at three clip lengths (Base, graphs/speaker_gate.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from daemon.engines.qwen3.tts import params as layout
from scripts.common.build.runners import cpu_runner
from scripts.common.build.stage import Results
from scripts.common.floor import snr_gate
from scripts.common.gate_result import GateResult
from scripts.qwen3.tts import windows as w
from scripts.qwen3.tts.graphs import codec_sim, gates, speaker_gate
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.options import UPSTREAM_FRAMES
from scripts.qwen3.tts.pipeline.trajectory import gate_inputs
from scripts.qwen3.tts.stages.gating import Gates, record, renamed


@dataclass(frozen=True)
class CpuGates:
    """The CPU gates' results, and the trajectory's prompt rows, steps and
    predictor frames."""

    gates: Gates
    prompt: int
    steps: int
    frames: int


def inputs(ctx: BuildContext) -> dict[str, Any]:
    return ctx.keyed(onnx=ctx.onnx_dir, npu=ctx.npu_dir, gate=ctx.gate_dir)


def pairs(ctx: BuildContext) -> list[tuple[int, int]]:
    """(P, L) pairs covering every bucket: each prefill with the largest KV
    bucket, each KV bucket with the smallest prefill."""
    out = [(p, max(ctx.kv_buckets)) for p in ctx.prefill_buckets]
    out += [(min(ctx.prefill_buckets), n) for n in ctx.kv_buckets]
    return sorted(set(out))


def run(ctx: BuildContext, results: Results) -> CpuGates:
    """Every graph's CPU gate: graph key -> its gate results."""
    x = gate_inputs(ctx)
    m = ctx.model
    out: Gates = {}
    key = layout.TEXT_PROJ
    record(out, [key], [gates.gate_text_proj(m, cpu_runner(ctx.onnx(key)), x.text)])
    for p, n in pairs(ctx):
        keys = [layout.talker_prefill_key(p), layout.talker_decode_key(n)]
        steps = x.steps[: n - len(x.prompt)]
        fp32 = [cpu_runner(ctx.onnx(k)) for k in keys]
        record(out, keys, gates.gate_talker(m, *fp32, x.prompt, steps))
        kv16 = [cpu_runner(ctx.kv16_onnx(k)) for k in keys]
        res = gates.gate_talker(m, *kv16, x.prompt, steps)
        # fp16 K/V cannot meet the fp32 error bound; the argmax must still agree
        record(out, keys, [renamed(r, "fp16 K/V") for r in res if r.at_least])
    key = layout.CP_STEP
    res = gates.gate_predictor(m, cpu_runner(ctx.onnx(key)), x.hidden, x.codes)
    record(out, [key], res)
    res = gates.gate_predictor(m, cpu_runner(ctx.kv16_onnx(key)), x.hidden, x.codes)
    record(out, [key], [renamed(r, "fp16 K/V") for r in res if r.at_least])
    codec = ctx.codec.model
    book = ctx.src.predictor.vocab_size
    for t in ctx.codec_frames:
        key = layout.codec_key(t)
        runner = cpu_runner(ctx.onnx(key))
        codes = w.test_codes(book, t)
        # two lengths: a full window and a right-padded partial one
        half = codes[:, : t // 2 + 1]
        fp16 = codec_sim.fp16_range_gate(ctx.onnx(key), book)
        full = gates.gate_codec(codec, runner, codes)
        record(out, [key], [full, gates.gate_codec(codec, runner, half), fp16])
    record(out, [ctx.gate_codec().stem], [_upstream_chunking(ctx)])
    speakers = {
        f: cpu_runner(ctx.onnx(layout.speaker_key(f))) for f in ctx.xvector_buckets
    }
    for f, res in speaker_gate.cpu_gates(m, speakers, x.mel).items():
        record(out, [layout.speaker_key(f)], res)
    return CpuGates(out, len(x.prompt), len(x.steps), len(x.codes))


def _upstream_chunking(ctx: BuildContext) -> GateResult:
    """codec_325 driven in upstream's chunking (300 new frames, 25 of context)
    over more than one chunk, against upstream's own ``decode`` cast to
    float64, bound by upstream float32's own ``decode`` there."""
    codes = w.test_codes(ctx.src.predictor.vocab_size, w.UPSTREAM_GATE_FRAMES)
    decode = graph_decoder(cpu_runner(ctx.gate_codec()), UPSTREAM_FRAMES)
    spf = ctx.src.codec.decode_upsample_rate
    window = [(UPSTREAM_FRAMES, w.UPSTREAM_CONTEXT)]
    got = w.stream_decode(decode, codes, window, w.UPSTREAM_CHUNK, spf)
    want32 = w.upstream_decode(ctx.codec, codes)
    want64 = w.upstream_decode(ctx.codec, codes, float64=True)
    what = f"decode, in upstream's {w.UPSTREAM_CHUNK}+{w.UPSTREAM_CONTEXT} chunking"
    return snr_gate(layout.codec_key(UPSTREAM_FRAMES), what, want64, want32, got)


def graph_decoder(runner: Any, frames: int) -> w.Decode:
    """A codec_<frames> runner as a windows.Decode: right-pad, run, trim."""

    def run(codes: np.ndarray) -> np.ndarray:
        n = codes.shape[1]
        padded = np.zeros((1, codes.shape[0], frames), np.int32)
        padded[0, :, :n] = codes
        wav = runner.run({"codes": padded})[runner.output_index["wav"]]
        return np.asarray(wav).reshape(-1)[: n * (wav.size // frames)]

    return run
