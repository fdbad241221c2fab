"""Export of the static Qwen3 decoder graphs (scripts/qwen3/common/decoder.py):
their example inputs, their input and output names, and one export per step."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import torch
from torch import Tensor

from scripts.common.build.onnx_export import export_static
from scripts.qwen3.common.decoder import Decode, DecoderDims, Prefill, Qwen3Stack


def prefill_args(dims: DecoderDims, length: int) -> tuple[Tensor, ...]:
    """Example inputs of a prefill over `length` positions (names: PREFILL_INPUTS)."""
    return (
        torch.zeros(1, length, dims.hidden),
        torch.zeros(1, 1, length, length),
        torch.ones(1, length, dims.head_dim),
        torch.zeros(1, length, dims.head_dim),
        torch.zeros(1, length),
    )


def decode_args(
    dims: DecoderDims, length: int, kv_dtype: torch.dtype = torch.float32
) -> tuple[Tensor, ...]:
    """Example inputs of a decode step over an `length`-row cache (DECODE_INPUTS)."""
    cache = torch.zeros(
        dims.layers, dims.kv_heads, length, dims.head_dim, dtype=kv_dtype
    )
    return (
        torch.zeros(1, 1, dims.hidden),
        cache,
        cache.clone(),
        torch.zeros(1, 1, 1, length),
        torch.ones(1, 1, dims.head_dim),
        torch.zeros(1, 1, dims.head_dim),
    )


PREFILL_INPUTS = ("x", "mask", "cos", "sin", "last")
PREFILL_OUTPUTS = ("logits", "k", "v")
DECODE_INPUTS = ("x", "k_cache", "v_cache", "mask", "cos", "sin")
DECODE_OUTPUTS = ("logits", "k_new", "v_new")
#: with `hidden=True` (Qwen3-TTS's talker: h feeds the code predictor)
PREFILL_OUTPUTS_H = ("logits", "h", "k", "v")
DECODE_OUTPUTS_H = ("logits", "h", "k_new", "v_new")


Step = Literal["prefill", "decode"]


def export_step(
    stack: Qwen3Stack,
    step: Step,
    length: int,
    path: str | Path,
    kv_dtype: torch.dtype = torch.float32,
    hidden: bool = False,
) -> Path:
    """The ``step`` graph of ``stack`` at ``path``: a prefill over ``length``
    prompt positions or a decode step over a ``length``-row KV cache; K/V in
    ``kv_dtype``, with ``hidden`` also the final-normed h (the *_OUTPUTS_H)."""
    if step == "prefill":
        graph, args = Prefill(stack, kv_dtype, hidden), prefill_args(stack.dims, length)
        names = PREFILL_INPUTS, PREFILL_OUTPUTS_H if hidden else PREFILL_OUTPUTS
    else:
        graph = Decode(stack, kv_dtype, hidden)
        args = decode_args(stack.dims, length, kv_dtype)
        names = DECODE_INPUTS, DECODE_OUTPUTS_H if hidden else DECODE_OUTPUTS
    export_static(graph, args, *names, path)
    return Path(path)
