"""Stages ``gates_cpu`` and ``gates_sim``.

``gates_cpu``: the exported per-voice graphs and the length regulator
against their float32 and float64 ports on clips padded into each bucket
(each graph module's ``gate_cpu``, build/gates.py): within the float32 floor
or 1e-5.  The GPT, DiT and BigVGAN graphs are the package tests' (against
upstream's own ``inference_speech``, ``CFM.inference`` and decode); the build
does not run upstream.

``gates_sim``: every compiled binary against its fp32 ONNX on onnxruntime
CPU, fed the same inputs (random rows, full masks, the gather indices the
runtime writes): cosine >= 0.999, and for the GPT's logits top-1 agreement
>= 99 % up to fp16 ties (scripts/common/sim_gate.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np
from scripts.common.build.runners import Simulator, cpu_runner
from scripts.common.build.stage import Results
from scripts.common.gate_result import GateResult
from scripts.common.sim_gate import sim_gate

from hexvoice_indextts.layout import (
    campplus_name,
    codec_name,
    regulator_name,
    w2v_bert_name,
)
from hexvoice_indextts.pipeline.context import BuildContext
from hexvoice_indextts.pipeline.export import inputs as export_inputs
from hexvoice_indextts.tables import TABLES_FILE, UtteranceTables
from hexvoice_indextts.voice.frames import reflect_index, replicate_edges

#: the seed of the gates' random inputs
SEED: Final = 0
#: random rows' scale: inside every graph's trained input range
SCALE: Final = 0.5
#: w2v-BERT's least simulator cosine where it is not the common 0.999: its
#: 17 full-width layers in fp16 lose more than the other graphs (measured on
#: the tiny model's random full-size w2v-BERT: 0.9972 on a noise clip's
#: features); docs/upstream.md, findings
W2V_MIN_COSINE: Final = 0.995


class GateError(RuntimeError):
    """A graph failed its gate; the message names graph, metric and bound."""


@dataclass(frozen=True)
class Gates:
    rows: tuple[str, ...]  # every gate, as GateResult prints it


def _checked(results: list[GateResult]) -> Gates:
    failed = [str(r) for r in results if not r.passed]
    if failed:
        raise GateError("; ".join(failed))
    return Gates(tuple(str(r) for r in results))


def run_cpu(ctx: BuildContext, results: Results) -> Gates:
    from scripts.common.build.onnx_export import graph_spec

    from hexvoice_indextts.build import (
        campplus_graph,
        length_regulator_graph,
        semantic_codec_graph,
        w2v_bert_graph,
    )
    from hexvoice_indextts.model_dir.hub import (
        CAMPPLUS,
        CAMPPLUS_FILE,
        MASKGCT,
        W2V_BERT,
        snapshot,
    )

    md, hub, v = ctx.md, ctx.opts.hub, ctx.opts.voice_buckets

    def specs(name: Any, sizes: tuple[int, ...]) -> list[Any]:
        return [graph_spec(name(n), ctx.work.onnx(name(n))) for n in sorted(sizes)]

    model, w2v = w2v_bert_graph.load_w2v_bert(snapshot(hub, W2V_BERT), md.w2v_stat)
    codec, codebook = semantic_codec_graph.load_semantic_codec(
        snapshot(hub, MASKGCT), md.config.semantic_codec
    )
    cam = campplus_graph.load_campplus(snapshot(hub, CAMPPLUS) / CAMPPLUS_FILE)
    regulator = length_regulator_graph.load_length_regulator(
        md.s2mel, md.config.s2mel.length_regulator
    )
    frames = tuple(sorted(set(ctx.opts.utterance_buckets.regulator) | set(v.mel)))
    width = md.config.semantic_codec.hidden_size
    gates = [
        *w2v_bert_graph.gate_cpu(model, w2v, specs(w2v_bert_name, v.rows), v.rows),
        *semantic_codec_graph.gate_cpu(
            codec, codebook, specs(codec_name, v.rows), v.rows, width
        ),
        *campplus_graph.gate_cpu(cam, specs(campplus_name, v.fbank), v.fbank),
        *length_regulator_graph.gate_cpu(
            regulator, specs(regulator_name, frames), frames
        ),
    ]
    return _checked(gates)


def cpu_inputs(ctx: BuildContext) -> Mapping[str, Any]:
    return export_inputs(ctx)


def feeds(runner: Any, tables: UtteranceTables, rng: np.random.Generator) -> dict:
    """Inputs for one graph from its I/O: random rows, full masks, a one-hot
    pick of the last row, and the gather indices the runtime writes."""
    out: dict[str, np.ndarray] = {}
    rates = tables.vocoder["upsample_rates"]
    for t in runner.inputs:
        shape = tuple(t.shape)
        if t.name == "mask":
            out.setdefault(t.name, np.ones(shape, np.float32))
        elif t.name == "pick":
            out[t.name] = np.zeros(shape, np.float32)
            out[t.name][..., -1] = 1.0
        elif t.name == "reflect":  # the DiT's: frames + 2 * pad positions
            frames = runner.inputs[0].shape[-1]
            out[t.name] = reflect_index(frames, frames, tables.reflect_pad)
        elif t.name == "features":  # w2v-BERT's: a noise clip's own features
            out[t.name], out["mask"] = _w2v_features(shape[1], rng)
        elif t.name == "edges":  # BigVGAN's: per stage, from its mel frames
            frames = runner.inputs[0].shape[-1]
            out[t.name] = replicate_edges(frames, frames, rates)
        else:
            out[t.name] = (SCALE * rng.standard_normal(shape)).astype(np.float32)
    return out


def _w2v_features(rows: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    from hexvoice_indextts.build.w2v_bert_graph import samples_for
    from hexvoice_indextts.voice.semantic import bucket_inputs, w2v_features

    audio = (SCALE * rng.standard_normal(samples_for(2 * rows))).clip(-1, 1)
    f, m = w2v_features(audio.astype(np.float32))
    feed = bucket_inputs(f[:rows], m[:rows], rows)
    return feed["features"], feed["mask"]


def run_sim(ctx: BuildContext, results: Results) -> Gates:
    return sim_gates(ctx, ctx.graph_keys)


def sim_gates(ctx: BuildContext, keys: Sequence[str]) -> Gates:
    """The simulator gate of the graphs ``keys`` (GateError when one fails)."""
    tables = UtteranceTables.load(ctx.work.stage / TABLES_FILE)
    # a graph's own binary: unshared, or the gate copy of a shared one
    # (CompilePlan.gated: the simulator cannot load weight-shared binaries)
    sim, gates = Simulator(), []
    try:
        for key in keys:
            reference = cpu_runner(ctx.work.onnx(key), key)
            feed = feeds(reference, tables, np.random.default_rng(SEED))
            want = reference.run(feed)[0]
            got = sim.runner(ctx.work.bin_path(key), key).run(feed)[0]
            logits = key.startswith(("gpt_prefill", "gpt_decode"))
            found = sim_gate(key, [want], [got], rows=logits)
            if key.startswith("w2v_bert"):
                found[0] = replace(found[0], threshold=W2V_MIN_COSINE)
            gates += found
    finally:
        sim.close()
    return _checked(gates)


def sim_inputs(ctx: BuildContext) -> Mapping[str, Any]:
    return {"target": ctx.opts.target}
