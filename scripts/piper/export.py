"""Stage ``export``: the voice cut into its static NPU graphs and their
any-length CPU twins.

Per graph key (encoder per phoneme bucket, flow per frame bucket, HiFiGAN per
decoder window, convert.ConvertOptions.graph_keys): the static graph of
graphs.py in the work dir's ``onnx_npu/`` (what is compiled) and the same
tensors with the length axis symbolic (cpu_graphs.py) in ``onnx/`` (what the
bundle's CPU backend runs).  An op outside a part's plan stops here, naming
op and node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import onnx

from daemon.engines.piper.params import dec_key, enc_key, flow_key
from daemon.sdk.bundles.manifest import sha256_file
from scripts.common.build.stage import Results
from scripts.common.onnx_surgery import op_histogram
from scripts.piper import graphs
from scripts.piper.convert import ConvertOptions, PiperBuild
from scripts.piper.cpu_graphs import any_length
from scripts.piper.cuts import PiperCuts, find_cuts


@dataclass(frozen=True)
class Graph:
    """One exported graph: its node count and both files' sha256 (they key
    the stages reading the files)."""

    nodes: int
    npu_sha256: str
    cpu_sha256: str


@dataclass(frozen=True)
class Exported:
    graphs: dict[str, Graph]
    #: frames of context either side the flow needs (graphs.flow_context)
    flow_context: int


def inputs(ctx: PiperBuild) -> Mapping[str, Any]:
    o = ctx.options
    return {
        "voice": ctx.voice,
        "phoneme_buckets": o.phoneme_buckets,
        "frame_buckets": o.frame_buckets,
        "decoder_sizes": o.decoder_sizes,
    }


def outputs(ctx: PiperBuild) -> Iterable[Path]:
    for key in ctx.options.graph_keys:
        yield ctx.work.npu_onnx_path(key)
        yield ctx.work.onnx(key)


def _static(
    model: onnx.ModelProto, cuts: PiperCuts, options: ConvertOptions
) -> Iterator[tuple[str, Callable[[], onnx.ModelProto]]]:
    """(key, its builder) in ``options.graph_keys`` order."""
    hop = graphs.hop_length(model)
    for p in options.phoneme_buckets:
        yield enc_key(p), partial(graphs.encoder, model, cuts, p)
    for f in options.frame_buckets:
        yield flow_key(f), partial(graphs.flow, model, cuts, f)
    for w in options.decoder_sizes:
        yield dec_key(w), partial(graphs.decoder_window, model, cuts, w, hop)


def run(ctx: PiperBuild, results: Results) -> Exported:
    model = onnx.load(ctx.voice)
    cuts = find_cuts(model)
    out: dict[str, Graph] = {}
    flow_context = None
    for key, build in _static(model, cuts, ctx.options):
        graph = build()
        if flow_context is None and key.startswith("flow_F"):
            flow_context = graphs.flow_context(graph)  # the smallest bucket's
        npu, cpu = ctx.work.npu_onnx_path(key), ctx.work.onnx(key)
        npu.parent.mkdir(parents=True, exist_ok=True)
        cpu.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(graph, npu)
        onnx.save(any_length(model, cuts, key), cpu)
        ops = ", ".join(f"{k} {v}" for k, v in op_histogram(graph).items())
        ctx.log(f"  {key}: {len(graph.graph.node)} nodes ({ops})")
        out[key] = Graph(len(graph.graph.node), sha256_file(npu), sha256_file(cpu))
    assert flow_context is not None  # validate() asks for a frame bucket
    return Exported(out, flow_context)
