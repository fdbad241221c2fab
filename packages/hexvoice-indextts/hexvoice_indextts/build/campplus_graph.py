"""CAM++'s static graphs (one per fbank-frame bucket) and their CPU gate.

The gate (build/gates.py) runs each exported graph on onnxruntime CPU on clips
of several lengths in the bucket (the padded, masked path) against the port
run at the clip's own length (tests/build/test_campplus.py holds the port to
upstream's CAMPPlus).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import torch
from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.common.floor import in_float64
from scripts.common.gate_result import GateResult

from hexvoice_indextts.build.campplus import FEAT_DIM, MaskedCampPlus
from hexvoice_indextts.build.gates import Case, gate_graph
from hexvoice_indextts.voice.style import INPUTS, MIN_FRAMES, OUTPUT, bucket_inputs

#: a graph's error bound against float64 when float32's own is smaller
#: (the fp32 port is ~4e-7 from float64 on the tiny and real widths)
MAX_REL_ERR: Final = 1e-5


def graph_name(frames: int) -> str:
    return f"campplus_F{frames}"


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


def gate_lengths(frames: int, smaller: int) -> tuple[int, ...]:
    """Clip lengths a bucket is checked on: its full length, one frame over
    the next smaller bucket, and an odd length between."""
    low = max(MIN_FRAMES, smaller + 1)
    return tuple(sorted({frames, low, (low + frames) // 2 | 1}))


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
    """One rel-error gate per bucket graph, over ``gate_lengths`` clips."""
    ordered = sorted(buckets)
    results = []
    for spec, frames in zip(graphs, ordered, strict=True):
        smaller = ordered[ordered.index(frames) - 1] if frames != ordered[0] else 0
        cases = []
        for i, n in enumerate(gate_lengths(frames, smaller)):
            feat = _features(n, seed + i)
            whole, ones = torch.from_numpy(feat)[None], torch.ones(1, n)
            with torch.no_grad():
                upstream = model(whole, ones).numpy()
                with in_float64(model):
                    exact = model(whole.double(), ones.double()).numpy()
            cases.append(Case(bucket_inputs(feat, frames), upstream, exact))
        results.append(gate_graph(spec, cases, MAX_REL_ERR))
    return results
