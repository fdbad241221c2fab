"""BigVGAN's window graphs (graphs/bigvgan.py), one per window size, from the
hub snapshot upstream loads (``BigVGAN.from_pretrained(cfg.vocoder.name)``):
``config.json`` and ``bigvgan_generator.pt`` ({"generator": state dict}).
Its weight norm is applied in the graph as upstream's remove_weight_norm
computes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import torch
from scripts.common.build.onnx_export import GraphSpec, export_static

from hexvoice_indextts.graphs.bigvgan import INPUTS, OUTPUT, MaskedBigVGAN
from hexvoice_indextts.layout import bigvgan_name as graph_name
from hexvoice_indextts.voice.frames import replicate_edges

CONFIG: Final = "config.json"
GENERATOR: Final = "bigvgan_generator.pt"


def bigvgan_config(snapshot: Path) -> dict[str, Any]:
    return json.loads((Path(snapshot) / CONFIG).read_text())


def load_bigvgan(snapshot: Path, frames: int) -> MaskedBigVGAN:
    state = torch.load(
        Path(snapshot) / GENERATOR, map_location="cpu", weights_only=True
    )
    return MaskedBigVGAN(state["generator"], bigvgan_config(snapshot), frames).eval()


def export_bigvgan(port: MaskedBigVGAN, out: Path) -> GraphSpec:
    f = port.frames
    args = (
        torch.zeros(1, port.p.w("conv_pre.weight_v").shape[1], f),
        torch.ones(1, f * port.hop),
        torch.from_numpy(replicate_edges(f, f, port.rates)),
    )
    path = Path(out) / f"{graph_name(f)}.onnx"
    return export_static(port, args, INPUTS, (OUTPUT,), path)
