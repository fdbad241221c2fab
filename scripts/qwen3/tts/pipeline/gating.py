"""The build's parity gates: what they are fed and what stops the build.

The gates themselves (metrics, thresholds, the graph drivers) are
scripts/qwen3/tts/graphs/gates.py (CPU vs upstream) and scripts/qwen3/asr/gates.py
``sim_gate`` (simulator vs CPU: cosine and top-1 with the fp16-tie rule); this
module picks one deterministic input and runs them over every graph the build
made (pipeline/trajectory.py: upstream's greedy run of a fixed text).

CPU: text_proj; every (prefill, decode) pair covering each bucket, fp32 (rel
error, argmax, h) and with the NPU's fp16 K/V (argmax); cp_step teacher-forced
on every frame (fp32 and fp16 K/V); every codec window at two lengths (full and
right-padded) and codec_325 in upstream's 300 + 25 chunking against upstream's
``decode`` (each against upstream cast to float64, bound by upstream float32's
own SNR there, scripts/common/floor.py), and the fp16 range of every tensor of
every codec window (graphs/codec_sim.py); every speaker bucket at three clip
lengths (Base, graphs/speaker_gate.py).  Simulator: the binaries vs the fp32
graphs on the CPU backend, on a few steps, one frame, every codec window whole
(graphs/codec_sim.py: the simulator takes seconds per frame, so a build may
list fewer, ``--sim-codec-windows``) and each speaker bucket at one length.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any, Final

import numpy as np

from daemon.engines.qwen3.tts import params as layout
from scripts.common.floor import snr_gate
from scripts.qwen3.asr.gates import GateResult, sim_gate
from scripts.qwen3.tts import codec_plan
from scripts.qwen3.tts import windows as codec_windows
from scripts.qwen3.tts.graphs import codec_sim, gates, speaker_gate
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.trajectory import GateInputs, gate_inputs

_LOGGER = logging.getLogger(__name__)
#: teacher-forced talker steps on the simulator, and predictor frames
SIM_STEPS: Final = 4
SIM_FRAMES: Final = 1


class GateError(RuntimeError):
    """A gate failed; the message names graph, metric, value and threshold."""


def _record(
    out: dict, keys: Iterable[str], results: Iterable[GateResult], fatal: bool = True
) -> None:
    """Log and store each result under every key; a failure stops the build
    unless not ``fatal`` (a measurement reported, e.g. the opt-in w8a16)."""
    keys = list(keys)
    for r in results:
        _LOGGER.info("%s (%s)", r, ", ".join(keys))  # progress of a long step
        entry = {**asdict(r), "passed": r.passed}
        for key in keys:
            out.setdefault(key, []).append(entry)
        if fatal and not r.passed:
            raise GateError(f"gate failed: {', '.join(keys)}: {r}")


def _renamed(r: GateResult, note: str) -> GateResult:
    return GateResult(r.name, f"{r.metric} ({note})", r.value, r.threshold,
                      r.at_least)  # fmt: skip


def _pairs(ctx: BuildContext) -> list[tuple[int, int]]:
    """(P, L) pairs covering every bucket: each prefill with the largest KV
    bucket, each KV bucket with the smallest prefill."""
    pairs = [(p, max(ctx.kv_buckets)) for p in ctx.prefill_buckets]
    pairs += [(min(ctx.prefill_buckets), n) for n in ctx.kv_buckets]
    return sorted(set(pairs))


# ------------------------------------------------------------------ windows
def windows(
    ctx: BuildContext, asked: Sequence[codec_windows.Window], first_frames: int
) -> dict[str, Any]:
    """Each window's left context from the codec's receptive field (or as
    given), the schedule measured on the model's own codec (codec_plan.py);
    the {frames, context}, first_frames and the measured SNR are params.codec's."""
    from scripts.qwen3.tts.upstream import torch_threads

    with torch_threads(1):  # tiny ops: one thread beats a contended pool
        return _windows(ctx, asked, first_frames)


def _windows(
    ctx: BuildContext, asked: Sequence[codec_windows.Window], first_frames: int
) -> dict[str, Any]:
    spf, book = ctx.src.codec.decode_upsample_rate, ctx.src.predictor.vocab_size
    chosen = codec_plan.plan(asked, codec_windows.decoder_config(ctx.codec))
    sched = codec_plan.measure(ctx.codec, chosen, first_frames, spf, book)
    _LOGGER.info(
        "codec schedule %s, first %d frames (receptive field %d frames): %s, SNR "
        "%.1f dB vs upstream's decode (upstream float32 vs float64: %.1f dB), "
        "%.2f frames computed per frame kept (%.2f steady), first audio %.3f s",
        chosen, first_frames, sched["receptive_field"],
        "exact" if sched["exact"] else "APPROXIMATE", sched["snr_db"],
        sched["upstream_floor_db"], sched["frames_per_kept"],
        sched["steady_frames_per_kept"], sched["first_audio_s"],
    )  # fmt: skip
    if not sched["exact"]:
        _LOGGER.warning(
            "the codec schedule's contexts are shorter than the decoder's receptive "
            "field (%d frames): streamed audio differs from upstream's decode "
            "(measured above; the bundle says so)", sched["receptive_field"],
        )  # fmt: skip
    return {
        "schedule": sched,
        "codec": {
            "windows": [{"frames": f, "context": c} for f, c in chosen],
            "first_frames": first_frames,
            "stream_snr_db": sched["snr_db"],
        },
    }


# --------------------------------------------------------------------- CPU
def cpu_gates(ctx: BuildContext) -> dict:
    """Every graph's CPU gate: graph key -> its gate results."""
    from scripts.common.build.runners import cpu_runner

    x = gate_inputs(ctx)
    m = ctx.model
    out: dict[str, list] = {}
    key = layout.TEXT_PROJ
    _record(out, [key], [gates.gate_text_proj(m, cpu_runner(ctx.onnx(key)), x.text)])
    for p, n in _pairs(ctx):
        keys = [layout.talker_prefill_key(p), layout.talker_decode_key(n)]
        steps = x.steps[: n - len(x.prompt)]
        fp32 = gates.gate_talker(m, *(cpu_runner(ctx.onnx(k)) for k in keys),
                                 x.prompt, steps)  # fmt: skip
        _record(out, keys, fp32)
        kv16 = gates.gate_talker(m, *(cpu_runner(ctx.npu_onnx(k)) for k in keys),
                                 x.prompt, steps)  # fmt: skip
        # fp16 K/V cannot meet the fp32 error bound; the argmax must still agree
        _record(out, keys, [_renamed(r, "fp16 K/V") for r in kv16 if r.at_least])
    key = layout.CP_STEP
    for path, note in ((ctx.onnx(key), None), (ctx.npu_onnx(key), "fp16 K/V")):
        res = gates.gate_predictor(m, cpu_runner(path), x.hidden, x.codes)
        _record(out, [key], [_renamed(r, note) for r in res if r.at_least]
                if note else res)  # fmt: skip
    codec = ctx.codec.model
    for t in ctx.codec_frames:
        key = layout.codec_key(t)
        run = cpu_runner(ctx.onnx(key))
        codes = codec_windows.test_codes(ctx.src.predictor.vocab_size, t)
        # two lengths: a full window and a right-padded partial one
        half = codes[:, : t // 2 + 1]
        fp16 = codec_sim.fp16_range_gate(ctx.onnx(key), ctx.src.predictor.vocab_size)
        _record(out, [key], [gates.gate_codec(codec, run, codes),
                             gates.gate_codec(codec, run, half), fp16])  # fmt: skip
    _record(out, [ctx.gate_codec().stem], [_upstream_chunking(ctx)])
    speakers = {f: cpu_runner(ctx.onnx(layout.speaker_key(f)))
                for f in ctx.xvector_buckets}  # fmt: skip
    for f, res in speaker_gate.cpu_gates(m, speakers, x.mel).items():
        _record(out, [layout.speaker_key(f)], res)
    return {"gates": out, "prompt": len(x.prompt), "steps": len(x.steps),
            "frames": len(x.codes)}  # fmt: skip


def _upstream_chunking(ctx: BuildContext) -> GateResult:
    """codec_325 driven in upstream's chunking (300 new frames, 25 of context)
    over more than one chunk, against upstream's own ``decode`` cast to
    float64, bound by upstream float32's own ``decode`` there."""
    from scripts.common.build.runners import cpu_runner

    w = codec_windows
    frames = w.UPSTREAM_CHUNK + w.UPSTREAM_CONTEXT
    codes = w.test_codes(ctx.src.predictor.vocab_size, w.UPSTREAM_GATE_FRAMES)
    decode = graph_decoder(cpu_runner(ctx.gate_codec()), frames)
    spf = ctx.src.codec.decode_upsample_rate
    got = w.stream_decode(decode, codes, [(frames, w.UPSTREAM_CONTEXT)],
                          w.UPSTREAM_CHUNK, spf)  # fmt: skip
    want32 = w.upstream_decode(ctx.codec, codes)
    want64 = w.upstream_decode(ctx.codec, codes, float64=True)
    what = f"decode, in upstream's {w.UPSTREAM_CHUNK}+{w.UPSTREAM_CONTEXT} chunking"
    return snr_gate(layout.codec_key(frames), what, want64, want32, got)


def graph_decoder(runner: Any, frames: int) -> codec_windows.Decode:
    """A codec_<frames> runner as a windows.Decode: right-pad, run, trim."""

    def run(codes: np.ndarray) -> np.ndarray:
        n = codes.shape[1]
        padded = np.zeros((1, codes.shape[0], frames), np.int32)
        padded[0, :, :n] = codes
        wav = runner.run({"codes": padded})[runner.output_index["wav"]]
        return np.asarray(wav).reshape(-1)[: n * (wav.size // frames)]

    return run


# --------------------------------------------------------------- simulator
def sim_gates(
    ctx: BuildContext,
    params: dict[str, Any],
    quantized: bool = False,
    codec: Sequence[int] | None = None,
) -> dict:
    """The compiled binaries on the x86 HTP simulator against the fp32 graphs
    on the CPU backend: graph key -> its gate results (+ seconds per call).
    A w8a16 cp_step (``quantized``) is measured and reported, not gated: the
    option is opt-in until its parity holds.  ``codec``: the codec windows
    (frames) gated, each whole (seconds per frame on the simulator); None:
    every one."""
    from scripts.common.build.runners import Simulator, cpu_runner

    x = gate_inputs(ctx)
    m = ctx.model
    out: dict[str, list] = {}
    secs: dict[str, float] = {}
    sim = Simulator()
    try:
        key = layout.TEXT_PROJ
        run = sim.runner(ctx.bin_path(key), key)
        ids = np.asarray(x.text)
        feeds = _text_rows(m, run, ids)
        got, ref = (r.run(feeds)[r.output_index["y"]][: len(ids)]
                    for r in (run, cpu_runner(ctx.onnx(key))))  # fmt: skip
        _record(out, [key], sim_gate("text_proj", [ref], [got], False))
        _seconds(secs, key, run)
        p, n = min(ctx.prefill_buckets), min(ctx.kv_buckets)
        keys = [layout.talker_prefill_key(p), layout.talker_decode_key(n)]
        run = sim.open({k: ctx.bin_path(k) for k in keys})
        steps = x.steps[: min(SIM_STEPS, n - len(x.prompt))]
        got, _ = gates.talker_graphs(m, *(run[k] for k in keys), x.prompt, steps)
        ref, _ = gates.talker_graphs(m, *(cpu_runner(ctx.onnx(k)) for k in keys),
                                     x.prompt, steps)  # fmt: skip
        _record(out, keys, sim_gate("talker", [ref], [got]))
        for k in keys:
            _seconds(secs, k, run[k])
        key = layout.CP_STEP
        run = sim.runner(ctx.bin_path(key), key)
        rows = gates.predictor_rows(m, x.hidden[:SIM_FRAMES], x.codes[:SIM_FRAMES])
        got = gates.predictor_graph(m, run, rows)
        ref = gates.predictor_graph(m, cpu_runner(ctx.onnx(key)), rows)
        res = sim_gate("predictor", [ref], [got])
        if quantized:
            res = [_renamed(r, "w8a16, reported") for r in res]
        _record(out, [key], res, fatal=not quantized)
        _seconds(secs, key, run)
        for t in ctx.codec_frames if codec is None else sorted(codec):
            key = layout.codec_key(t)
            run = sim.runner(ctx.bin_path(key), key)
            cpu = cpu_runner(ctx.onnx(key))
            book = ctx.src.predictor.vocab_size
            _record(out, [key], codec_sim.sim_codec_gate(run, cpu, book))
            _seconds(secs, key, run)
        for f in ctx.xvector_buckets:  # one clip length per bucket
            key = layout.speaker_key(f)
            run = sim.runner(ctx.bin_path(key), key)
            gate, report = speaker_gate.sim_gates(
                m, run, cpu_runner(ctx.onnx(key)), x.mel, f, ctx.xvector_buckets
            )
            _record(out, [key], gate)
            _record(out, [key], report, fatal=False)
            _seconds(secs, key, run)
    finally:
        sim.close()
    return {"gates": out, "seconds": secs}


def _text_rows(model: Any, runner: Any, ids: np.ndarray) -> dict[str, np.ndarray]:
    emb = model.talker.model.text_embedding.weight.detach().float().numpy()
    rows = runner.inputs[0].shape[0]
    x = np.zeros((rows, emb.shape[1]), np.float32)
    x[: len(ids)] = emb[ids]
    return {"x": x}


def _seconds(secs: dict, key: str, runner: Any) -> None:
    """Mean simulator seconds per call of ``key`` (the summary's last column)."""
    if runner.stats.calls:
        secs[key] = round(runner.stats.seconds / runner.stats.calls, 4)


__all__ = ["GateError", "GateInputs", "cpu_gates", "sim_gates", "windows"]
