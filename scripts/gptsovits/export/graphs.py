"""Export the T2S and SoVITS graphs to static-shape fp32 ONNX.

Every input and output has a fixed shape from `shapes.GraphShapes`; no index
inputs exist in these four graphs (embeddings and the codebook are CPU tables),
so nothing needs in-graph clipping here. The exporter is the builds' one
(scripts/common/build/onnx_export.py `export_static`: torch's TorchScript
exporter, the BASIC fold, the Pow(x, 2) lint).
"""

from __future__ import annotations

from pathlib import Path

import torch

from daemon.engines.gptsovits import speed
from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.gptsovits.models.sovits import SovitsModel, VitsEnc, VitsGen
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.models.t2s_graphs import T2SDecode, T2SPrefill
from scripts.gptsovits.shapes import EXTERNAL_DATA, GraphShapes


def export_t2s(
    model: T2SModel,
    shapes: GraphShapes,
    out_dir: Path,
    kv_dtype: torch.dtype = torch.float32,
) -> list[GraphSpec]:
    """t2s_prefill.onnx and one t2s_decode_L<L>.onnx per KV bucket. With
    kv_dtype=torch.float16 the K/V inputs and outputs are fp16 (for the NPU
    binaries, so the runtime's fp16 caches bind without conversion)."""
    d = model.dims
    p = shapes.prefill_len
    specs = [
        export_static(
            T2SPrefill(model, kv_dtype),
            (torch.zeros(1, p, d.dim), torch.zeros(1, 1, p, p)),
            ["xy", "mask"],
            ["h", "k", "v"],
            out_dir / "t2s_prefill.onnx",
            EXTERNAL_DATA,
        )
    ]
    for length in shapes.kv_buckets:
        cache = torch.zeros(d.layers, d.heads, length, d.head_dim, dtype=kv_dtype)
        specs.append(
            export_static(
                T2SDecode(model, kv_dtype),
                (
                    torch.zeros(1, 1, d.dim),
                    cache,
                    cache.clone(),
                    torch.zeros(1, 1, 1, length),
                ),
                ["x", "k_cache", "v_cache", "mask"],
                ["logits", "k_new", "v_new"],
                out_dir / f"t2s_decode_L{length}.onnx",
                EXTERNAL_DATA,
            )
        )
    return specs


def export_vits(
    model: SovitsModel, shapes: GraphShapes, out_dir: Path
) -> list[GraphSpec]:
    """vits_enc.onnx (FR frames x TT phones; the speed as a [FR, FR] stretch
    matrix and its output mask, daemon/engines/gptsovits/speed.py) and
    vits_gen.onnx (WIN frames)."""
    d = model.dims
    fr, tt, win = shapes.vits_frames, shapes.vits_phones, shapes.gen_window
    enc_args = (
        torch.zeros(1, d.ssl, fr),
        torch.ones(1, 1, fr),
        torch.zeros(1, d.hidden, tt),
        torch.ones(1, 1, tt),
        torch.zeros(1, d.mrte, 1),
        torch.zeros(1, d.gin, 1),
        torch.zeros(1, d.inter, fr),
        torch.eye(fr).unsqueeze(0),
        torch.ones(1, 1, fr),
    )
    gen_args = (
        torch.zeros(1, d.inter, win),
        torch.zeros(1, d.gin, 1),
        torch.ones(1, 1, win),
    )
    return [
        export_static(
            VitsEnc(model),
            enc_args,
            ["ssl", "y_mask", "text", "text_mask", "ge512", "ge", "noise"]
            + [speed.STRETCH, speed.Z_MASK],
            ["z"],
            out_dir / "vits_enc.onnx",
            EXTERNAL_DATA,
        ),
        export_static(
            VitsGen(model),
            gen_args,
            ["z", "ge", "mask"],
            ["audio"],
            out_dir / "vits_gen.onnx",
            EXTERNAL_DATA,
        ),
    ]
