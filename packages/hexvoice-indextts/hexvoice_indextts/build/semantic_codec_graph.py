"""The semantic codec's static graphs (one per row bucket, the w2v-BERT
buckets) and their CPU gate: the graph's latents against the port's on the
rows alone (build/gates.py), and the codes the CPU picks from them against
the codes of float64's latents, at least as often as float32's own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import torch
from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.common.floor import index_gate
from scripts.common.gate_result import GateResult

from hexvoice_indextts.build.gates import (
    Case,
    gate_graph,
    gated_buckets,
    port_pair,
    run_cases,
)
from hexvoice_indextts.graphs.semantic_codec import (
    MaskedSemanticEncoder,
    codebook_tables,
)
from hexvoice_indextts.layout import codec_name as graph_name
from hexvoice_indextts.model_dir.config import SemanticCodec
from hexvoice_indextts.model_dir.hub import MASKGCT_FILE
from hexvoice_indextts.voice.semantic_codes import Codebook, codec_inputs

#: the file upstream reads from amphion/MaskGCT (hf_hub_download)
CHECKPOINT: Final = MASKGCT_FILE
INPUTS: Final = ("hidden", "mask")
OUTPUT: Final = "latents"


def load_semantic_codec(
    snapshot: Path, cfg: SemanticCodec
) -> tuple[MaskedSemanticEncoder, Codebook]:
    """The port and the CPU tables from the MaskGCT snapshot's safetensors."""
    import safetensors.torch

    state = safetensors.torch.load_file(str(Path(snapshot) / CHECKPOINT))
    return MaskedSemanticEncoder(state, cfg).eval(), codebook_tables(state)


def export_semantic_codec(
    port: MaskedSemanticEncoder, rows: int, width: int, out: Path
) -> GraphSpec:
    args = (torch.zeros(1, rows, width), torch.ones(1, rows))
    path = Path(out) / f"{graph_name(rows)}.onnx"
    return export_static(port, args, INPUTS, (OUTPUT,), path)


def gate_cpu(
    port: MaskedSemanticEncoder,
    tables: Codebook,
    graphs: Iterable[GraphSpec],
    buckets: Sequence[int],
    width: int,
    seed: int = 0,
) -> list[GateResult]:
    """Per bucket (build/gates.gated_buckets' row counts): latents' rel error
    and codes' agreement."""
    results = []
    for spec, rows, lengths in gated_buckets(graphs, buckets):
        cases = []
        for i, n in enumerate(lengths):
            hidden = np.random.default_rng(seed + i).standard_normal((n, width))
            hidden = hidden.astype(np.float32)
            upstream, exact = port_pair(
                port, torch.from_numpy(hidden)[None], torch.ones(1, n)
            )
            cases.append(Case(codec_inputs(hidden, rows), upstream, exact))
        got = run_cases(spec, cases)
        results.append(gate_graph(spec, cases, got))
        codes = [
            np.concatenate([tables.codes(a[0]) for a in arrays])
            for arrays in ([c.exact for c in cases], [c.upstream for c in cases], got)
        ]
        results.append(index_gate(spec.name, "codes", *codes))
    return results
