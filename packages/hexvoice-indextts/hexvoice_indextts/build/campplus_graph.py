"""CAM++'s static graphs (one per fbank-frame bucket) and their CPU gate.

The gate (build/gates.py) runs each exported graph on onnxruntime CPU on clips
of several lengths in the bucket (the padded, masked path) against the port
run at the clip's own length (tests/graphs/test_campplus.py holds the port to
upstream's CAMPPlus).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import torch
from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.common.gate_result import GateResult

from hexvoice_indextts.build.gates import Case, gate_graph, gated_buckets, port_pair
from hexvoice_indextts.graphs.campplus import FEAT_DIM, MaskedCampPlus
from hexvoice_indextts.layout import campplus_name as graph_name
from hexvoice_indextts.voice.style import INPUTS, MIN_FRAMES, OUTPUT, bucket_inputs


def load_campplus(checkpoint: Path) -> MaskedCampPlus:
    """Upstream's ``campplus_cn_common.bin`` (a state dict) in the port."""
    model = MaskedCampPlus().eval()
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    model.load_state_dict(state, strict=True)
    return model


def export_campplus(model: MaskedCampPlus, frames: int, out: Path) -> GraphSpec:
    """The ``campplus_F<frames>`` graph: fbank [1, frames, 80] + mask -> style."""
    args = (torch.zeros(1, frames, FEAT_DIM), torch.ones(1, frames))
    path = Path(out) / f"{graph_name(frames)}.onnx"
    return export_static(model, args, INPUTS, (OUTPUT,), path)


def _features(length: int, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    feat = g.standard_normal((length, FEAT_DIM)).astype(np.float32)
    return feat - feat.mean(axis=0, keepdims=True)


def gate_cpu(
    model: MaskedCampPlus,
    graphs: Iterable[GraphSpec],
    buckets: Sequence[int],
    seed: int = 0,
) -> list[GateResult]:
    """One rel-error gate per bucket graph (build/gates.gated_buckets' lengths)."""
    results = []
    for spec, frames, lengths in gated_buckets(graphs, buckets, low=MIN_FRAMES):
        cases = []
        for i, n in enumerate(lengths):
            feat = _features(n, seed + i)
            upstream, exact = port_pair(
                model, torch.from_numpy(feat)[None], torch.ones(1, n)
            )
            cases.append(Case(bucket_inputs(feat, frames), upstream, exact))
        results.append(gate_graph(spec, cases))
    return results
