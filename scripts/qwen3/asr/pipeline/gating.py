"""The build's parity gates: what they are fed and what stops the build.

The gates themselves (metrics, thresholds, the decode driver on the runtime's
runners) are scripts/qwen3/asr/gates.py; this module picks one deterministic
input and runs them over every graph the build made:

- the gate clip: a chirp in noise of 1.25 attention windows (so the encoder's
  multi-window path runs), shortened until its prompt fits the smallest prefill
  bucket; its mel from upstream's processor, its prompt upstream's own
  (the checkpoint's chat template, audio pads expanded by the processor);
- the audio rows: upstream's windowed encoder (oracle.encode_windowed);
- the teacher-forced tokens: upstream's greedy trajectory over its full forward.

CPU: encoder graph vs upstream; every (prefill, decode) pair that covers each
bucket, fp32 (rel error and argmax) and with the NPU's fp16 K/V (argmax).
Simulator: the compiled binaries vs the fp32 graphs on the CPU backend.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from daemon.engines.qwen3.asr import params as layout
from daemon.engines.qwen3.asr.params import AsrParams
from scripts.common.build.stage import Results
from scripts.common.gate_result import GateResult
from scripts.common.sim_gate import sim_gate
from scripts.qwen3.asr import encoder, gates
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.params import params
from scripts.qwen3.asr.pipeline.source import SAMPLE_RATE

_LOGGER = logging.getLogger(__name__)
#: attention windows of audio in the gate clip (more than one: the window loop)
CLIP_WINDOWS: Final = 1.25
#: greedy steps teacher-forced on the CPU, and of those on the simulator (each
#: simulator call of a full-size decode step takes seconds)
CPU_STEPS: Final = 16
SIM_STEPS: Final = 6
#: the clip's fixed seed and level: the gates see the same input every build
CLIP_SEED: Final = 1234
CLIP_LEVEL: Final = 0.3
#: tokens per second of audio: 100 mel frames per second, 13 tokens per chunk
_TOKENS_PER_S: Final = encoder.CHUNK_TOKENS


class GateError(RuntimeError):
    """A gate failed; the message names graph, metric, value and threshold."""


#: graph key -> its gates (a graph gated in several pairs: each pair's)
Gates = dict[str, list[GateResult]]


@dataclass(frozen=True)
class CpuGates:
    """The CPU gates' results, and the gate clip's prompt and forced tokens."""

    gates: Gates
    tokens: int
    prompt: int


@dataclass(frozen=True)
class SimGates:
    """The simulator gates' results, and each graph's mean seconds per call."""

    gates: Gates
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class GateInputs:
    params: AsrParams  # the bundle's (the engine's code drives the graphs)
    mel: np.ndarray  # [M, F]
    prompt: np.ndarray  # [n, H] embeddings, audio rows scattered in
    tokens: list[int]  # the greedy trajectory after the prompt


def gate_clip(seconds: float) -> np.ndarray:
    """A deterministic float32 clip at 16 kHz: a 200-3000 Hz chirp in noise."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    sweep = 200.0 * t + (2800.0 / (2 * seconds)) * t**2
    noise = np.random.default_rng(CLIP_SEED).standard_normal(t.size)
    return (CLIP_LEVEL * (np.sin(2 * np.pi * sweep) + 0.3 * noise)).astype(np.float32)


def gate_inputs(ctx: BuildContext, steps: int = CPU_STEPS) -> GateInputs:
    """Mel, prompt embeddings and tokens of the gate clip (see module doc)."""
    from scripts.qwen3.asr.oracle import encode_windowed

    seconds = CLIP_WINDOWS * ctx.src.audio.window_chunks
    ids, mel = _features(ctx, seconds)
    room = min(ctx.prefill_buckets) - (len(ids) - _TOKENS_PER_S * seconds)
    if len(ids) > min(ctx.prefill_buckets):  # shorten to whole seconds that fit
        seconds = float(room // _TOKENS_PER_S)
        if seconds < 1:
            raise GateError(
                f"prefill bucket {min(ctx.prefill_buckets)}: no room for one second "
                f"of audio after the {len(ids)} prompt tokens"
            )
        ids, mel = _features(ctx, seconds)
    audio = np.asarray(encode_windowed(ctx.model, mel), np.float32)
    prompt = gates.prompt_embeddings(ctx.model, ids, audio)
    budget = min(steps, min(ctx.kv_buckets) - len(ids) - 1)
    _LOGGER.info(
        "gate clip: %g s, %d prompt tokens, %d teacher-forced steps",
        seconds,
        len(ids),
        max(budget, 0),
    )
    checked = AsrParams.from_mapping(params(ctx))
    return GateInputs(checked, mel, prompt, _greedy(ctx.model, prompt, budget))


def _features(ctx: BuildContext, seconds: float) -> tuple[list[int], np.ndarray]:
    """(prompt ids with the audio pads expanded, mel [M, F]) as upstream's
    processor makes them for the gate clip."""
    from scripts.qwen3.asr import oracle

    out = oracle.inputs(ctx.asr.processor, gate_clip(seconds))
    frames = int(out["feature_attention_mask"][0].sum())
    mel = out["input_features"][0, :, :frames].numpy().astype(np.float32)
    return [int(i) for i in out["input_ids"][0]], mel


def _greedy(model: Any, prompt: np.ndarray, steps: int) -> list[int]:
    tokens: list[int] = []
    for _ in range(max(steps, 0)):
        tokens.append(int(gates.upstream_logits(model, prompt, tokens)[-1].argmax()))
    return tokens


def _pairs(ctx: BuildContext) -> list[tuple[int, int]]:
    """(P, L) pairs covering every bucket: each prefill with the largest KV
    bucket, each KV bucket with the smallest prefill."""
    pairs = [(p, max(ctx.kv_buckets)) for p in ctx.prefill_buckets]
    pairs += [(min(ctx.prefill_buckets), n) for n in ctx.kv_buckets]
    return sorted(set(pairs))


def _record(out: Gates, keys: Iterable[str], results: Iterable[GateResult]) -> None:
    for r in results:
        _LOGGER.info("%s (%s)", r, ", ".join(keys))  # progress of a long stage
        for key in keys:
            out.setdefault(key, []).append(r)
        if not r.passed:
            raise GateError(f"gate failed: {', '.join(keys)}: {r}")


def cpu_gates(ctx: BuildContext, results: Results) -> CpuGates:
    """Every graph's CPU gates (the gates_cpu stage)."""
    x = gate_inputs(ctx)
    out: Gates = {}
    enc = gates.gate_encoder(ctx.model, x.params, ctx.onnx(layout.ENCODER), x.mel)
    _record(out, [layout.ENCODER], [enc])
    for p, n in _pairs(ctx):
        keys = [layout.prefill_key(p), layout.decode_key(n)]
        fp32 = gates.gate_decoder(
            ctx.model, x.params, *(ctx.onnx(k) for k in keys), x.prompt, x.tokens
        )
        _record(out, keys, fp32)
        kv16 = gates.gate_decoder(
            ctx.model, x.params, *(ctx.npu_onnx(k) for k in keys), x.prompt, x.tokens
        )
        # fp16 K/V cannot meet the fp32 error bound; the argmax must still agree
        _record(out, keys, [_renamed(r, "fp16 K/V") for r in kv16 if r.at_least])
    return CpuGates(out, len(x.tokens), len(x.prompt))


def _renamed(r: GateResult, note: str) -> GateResult:
    return GateResult(r.name, f"{r.metric} ({note})", r.value, r.threshold, r.at_least)


def sim_gates(ctx: BuildContext, results: Results) -> SimGates:
    """The compiled binaries on the x86 HTP simulator against the fp32 graphs on
    the CPU backend (the gates_sim stage)."""
    from scripts.common.build.runners import Simulator, cpu_runner

    x = gate_inputs(ctx, SIM_STEPS)
    out: Gates = {}
    secs: dict[str, float] = {}
    sim = Simulator()
    try:
        enc = sim.runner(ctx.bin_path(layout.ENCODER), layout.ENCODER)
        cpu = cpu_runner(ctx.onnx(layout.ENCODER))
        ref = gates.encode_windows(x.params, cpu, x.mel)
        got = gates.encode_windows(x.params, enc, x.mel)
        _record(out, [layout.ENCODER], sim_gate("encoder", [ref], [got], False))
        _seconds(secs, layout.ENCODER, enc)
        for p, n in _pairs(ctx):
            keys = [layout.prefill_key(p), layout.decode_key(n)]
            run = sim.open({k: ctx.bin_path(k) for k in keys})
            cpu = [cpu_runner(ctx.onnx(k)) for k in keys]
            got, ref = (
                gates.decoder_logits(x.params, ctx.model, *pair, x.prompt, x.tokens)
                for pair in ([run[k] for k in keys], cpu)
            )
            _record(out, keys, sim_gate("decoder", [ref], [got]))
            for k in keys:
                _seconds(secs, k, run[k])
    finally:
        sim.close()
    return SimGates(out, secs)


def _seconds(secs: dict[str, float], key: str, runner: Any) -> None:
    """Mean simulator seconds per call of ``key`` (the summary's last column)."""
    if runner.stats.calls:
        secs[key] = round(runner.stats.seconds / runner.stats.calls, 4)
