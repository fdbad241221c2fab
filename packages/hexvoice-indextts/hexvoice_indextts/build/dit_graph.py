"""The flow-matching DiT's static graphs, one per mel-frame bucket
(graphs/dit.py), exported from ``s2mel.pth``."""

from __future__ import annotations

from pathlib import Path

import torch
from scripts.common.build.onnx_export import GraphSpec, export_static

from hexvoice_indextts.build.length_regulator_graph import s2mel_modules
from hexvoice_indextts.graphs.dit import INPUTS, OUTPUT, TIME_FREQS, MaskedDiT
from hexvoice_indextts.layout import dit_name as graph_name
from hexvoice_indextts.model_dir.config import S2mel
from hexvoice_indextts.voice.frames import reflect_index


def load_dit(checkpoint: Path, cfg: S2mel, frames: int) -> MaskedDiT:
    state = {
        k[len("estimator.") :]: v
        for k, v in s2mel_modules(checkpoint)["cfm"].items()
        if k.startswith("estimator.")
    }
    return MaskedDiT(state, cfg.DiT, cfg.wavenet, frames).eval()


def export_dit(port: MaskedDiT, cfg: S2mel, out: Path) -> GraphSpec:
    f, mels = port.frames, cfg.DiT.in_channels
    args = (
        torch.zeros(1, mels, f),
        torch.zeros(1, mels, f),
        torch.zeros(1, f, cfg.DiT.content_dim),
        torch.zeros(1, cfg.style_encoder.dim),
        torch.zeros(1, TIME_FREQS),
        torch.ones(1, f),
        torch.from_numpy(reflect_index(f, f, port.max_pad)),
    )
    path = Path(out) / f"{graph_name(f)}.onnx"
    return export_static(port, args, INPUTS, (OUTPUT,), path)
