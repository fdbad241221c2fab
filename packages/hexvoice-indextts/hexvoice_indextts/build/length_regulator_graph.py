"""The length regulator's static graphs (one per mel-frame bucket) and their
CPU gate: rows picked as torch's nearest interpolation picks them
(voice/frames.py), padded into the bucket, against the port on the real
frames alone (build/gates.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch
from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.common.gate_result import GateResult

from hexvoice_indextts.build.gates import Case, gate_graph, gated_buckets, port_pair
from hexvoice_indextts.graphs.length_regulator import MaskedLengthRegulator
from hexvoice_indextts.layout import regulator_name as graph_name
from hexvoice_indextts.model_dir.config import LengthRegulator
from hexvoice_indextts.s2mel.mel import FRAMES_PER_CODE
from hexvoice_indextts.voice.frames import nearest_rows, regulator_inputs

INPUTS: Final = ("rows", "mask")
OUTPUT: Final = "condition"


def s2mel_modules(checkpoint: Path) -> dict[str, Any]:
    """s2mel.pth's ``{"net": {module name: state dict}}``."""
    return torch.load(checkpoint, map_location="cpu", weights_only=True)["net"]


def load_length_regulator(
    checkpoint: Path, cfg: LengthRegulator
) -> MaskedLengthRegulator:
    return MaskedLengthRegulator(
        s2mel_modules(checkpoint)["length_regulator"], cfg
    ).eval()


def export_length_regulator(
    port: MaskedLengthRegulator, frames: int, out: Path
) -> GraphSpec:
    width = port.in_proj.in_features
    args = (torch.zeros(1, frames, width), torch.ones(1, frames))
    path = Path(out) / f"{graph_name(frames)}.onnx"
    return export_static(port, args, INPUTS, (OUTPUT,), path)


def gate_cpu(
    port: MaskedLengthRegulator,
    graphs: Iterable[GraphSpec],
    buckets: Sequence[int],
    seed: int = 0,
) -> list[GateResult]:
    """Per bucket (build/gates.gated_buckets' frame counts), each from
    int(frames / 1.72) rows (upstream's ratio)."""
    results, width = [], port.in_proj.in_features
    for spec, bucket, lengths in gated_buckets(graphs, buckets):
        cases = []
        for i, frames in enumerate(lengths):
            n = max(1, int(frames / float(FRAMES_PER_CODE)))
            rows = np.random.default_rng(seed + i).standard_normal((n, width))
            rows = rows.astype(np.float32)
            picked = torch.from_numpy(rows[nearest_rows(n, frames)])[None]
            upstream, exact = port_pair(port, picked, torch.ones(1, frames))
            cases.append(Case(regulator_inputs(rows, frames, bucket), upstream, exact))
        results.append(gate_graph(spec, cases))
    return results
