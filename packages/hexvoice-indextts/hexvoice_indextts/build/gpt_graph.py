"""The GPT's static graphs: prefill per prompt-row bucket, decode per
cache-length bucket (one row per beam), the latent pass per row bucket
(graphs/gpt.py), exported from ``gpt.pth``."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import torch
from scripts.common.build.onnx_export import GraphSpec, export_static

from hexvoice_indextts.gpt.generate import GptShape, decode_name, prefill_name
from hexvoice_indextts.graphs.gpt import (
    DECODE_INPUTS,
    DECODE_OUTPUTS,
    LATENT_INPUTS,
    LATENT_OUTPUTS,
    PREFILL_INPUTS,
    PREFILL_OUTPUTS,
    GptDecode,
    GptLatent,
    GptPrefill,
)
from hexvoice_indextts.graphs.gpt_conditioning import gpt_state
from hexvoice_indextts.layout import latent_name
from hexvoice_indextts.model_dir.config import Gpt

#: every GPT graph's module, by role
PORTS: Final = {"prefill": GptPrefill, "decode": GptDecode, "latent": GptLatent}


def load_ports(
    checkpoint: Path, cfg: Gpt, gpt_layer: dict[str, torch.Tensor] | None = None
) -> dict[str, torch.nn.Module]:
    """The three ports from gpt.pth; with s2mel's ``gpt_layer`` weights, the
    latent pass ends in it (what the runtime's latent graph is)."""
    state = gpt_state(checkpoint)
    ports = {role: cls(state, cfg.heads).eval() for role, cls in PORTS.items()}
    if gpt_layer is not None:
        ports["latent"] = GptLatent(state, cfg.heads, gpt_layer).eval()
    return ports


def shape_of(cfg: Gpt, beams: int) -> GptShape:
    return GptShape(cfg.layers, cfg.heads, cfg.model_dim, cfg.number_mel_codes, beams)


def _zeros(
    shapes: dict[str, tuple[int, ...]], names: tuple[str, ...]
) -> tuple[torch.Tensor, ...]:
    return tuple(torch.zeros(shapes[n]) for n in names)


def _export(
    port: torch.nn.Module,
    shapes: dict[str, tuple[int, ...]],
    names: tuple[tuple[str, ...], tuple[str, ...]],
    path: Path,
) -> GraphSpec:
    inputs, outputs = names
    return export_static(port, _zeros(shapes, inputs), inputs, outputs, path)


def export_prefill(
    port: torch.nn.Module, shape: GptShape, rows: int, out: Path
) -> GraphSpec:
    path = Path(out) / f"{prefill_name(rows)}.onnx"
    return _export(port, shape.prefill(rows), (PREFILL_INPUTS, PREFILL_OUTPUTS), path)


def export_decode(
    port: torch.nn.Module, shape: GptShape, positions: int, out: Path
) -> GraphSpec:
    path = Path(out) / f"{decode_name(positions)}.onnx"
    io = (DECODE_INPUTS, DECODE_OUTPUTS)
    return _export(port, shape.decode(positions), io, path)


def export_latent(
    port: torch.nn.Module, shape: GptShape, rows: int, out: Path
) -> GraphSpec:
    args = (torch.zeros(1, rows, shape.width),)
    path = Path(out) / f"{latent_name(rows)}.onnx"
    return export_static(port, args, LATENT_INPUTS, LATENT_OUTPUTS, path)
