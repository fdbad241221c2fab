"""Export the T2S and SoVITS graphs to static-shape fp32 ONNX.

Every input and output has a fixed shape from `shapes.GraphShapes`; no index
inputs exist in these four graphs (embeddings and the codebook are CPU tables),
so nothing needs in-graph clipping here. Uses torch's TorchScript exporter
(dynamo=False): the torch.export-based one needs onnxscript, and the graphs are
plain feed-forward code.
"""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import onnx
import onnxruntime as ort
import torch
from torch import nn

from daemon.engines.gptsovits import speed
from scripts.common.build.onnx_export import GraphSpec, graph_spec
from scripts.gptsovits.export.shapes import GraphShapes
from scripts.gptsovits.models.sovits import SovitsModel, VitsEnc, VitsGen
from scripts.gptsovits.models.t2s import T2SDecode, T2SModel, T2SPrefill

log = logging.getLogger(__name__)

# LayerNormalization is a single ONNX op from opset 17 on (QNN EP maps it 1:1).
OPSET = 17


def _fold_static_shapes(src: Path, work: Path) -> onnx.ModelProto:
    """Fold the Shape/ConstantOfShape/Where chains the tracer emits for sizes
    that are static here, using onnxruntime's hardware-independent BASIC level
    (constant folding and redundancy elimination; result is plain ONNX ops)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(work)
    ort.InferenceSession(str(src), options, providers=["CPUExecutionProvider"])
    model = onnx.load(str(work))
    # onnxruntime declares all of its own domains; keep only those in use.
    used = {node.domain for node in model.graph.node}
    keep = [
        o for o in model.opset_import if o.domain in used or o.domain in ("", "ai.onnx")
    ]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    model.producer_name = "hexvoice scripts.gptsovits.export.graphs"
    onnx.checker.check_model(model)
    return model


def _export(
    module: nn.Module,
    args: tuple[torch.Tensor, ...],
    inputs: list[str],
    outputs: list[str],
    path: Path,
    fold: bool = True,
) -> GraphSpec:
    """`fold=False` keeps the tracer's graph: onnxruntime's own later fusions
    (EXTENDED level, e.g. attention) fail on a BASIC-folded BERT, and the CPU
    backend loads these graphs with every optimization on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    # Work files next to the target; the graph appears under its name only
    # when complete.
    traced, folded = path.with_suffix(".traced.onnx"), path.with_suffix(".part")
    with torch.no_grad(), warnings.catch_warnings():
        # Expected with this exporter and static graphs; they would bury progress.
        warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX")
        warnings.filterwarnings("ignore", message="Constant folding - Only steps=1")
        torch.onnx.export(
            module.eval(),
            args,
            str(traced),
            dynamo=False,
            input_names=inputs,
            output_names=outputs,
            opset_version=OPSET,
            do_constant_folding=True,
        )
    if fold:
        model = _fold_static_shapes(traced, folded)
        traced.unlink()
        onnx.save(model, str(folded))
        folded.replace(path)
    else:
        traced.replace(path)
    log.info("exported %s in %.1f s", path.name, time.monotonic() - start)
    return graph_spec(path.stem, path)


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
        _export(
            T2SPrefill(model, kv_dtype),
            (torch.zeros(1, p, d.dim), torch.zeros(1, 1, p, p)),
            ["xy", "mask"],
            ["h", "k", "v"],
            out_dir / "t2s_prefill.onnx",
        )
    ]
    for length in shapes.kv_buckets:
        cache = torch.zeros(d.layers, d.heads, length, d.head_dim, dtype=kv_dtype)
        specs.append(
            _export(
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
        _export(
            VitsEnc(model),
            enc_args,
            ["ssl", "y_mask", "text", "text_mask", "ge512", "ge", "noise"]
            + [speed.STRETCH, speed.Z_MASK],
            ["z"],
            out_dir / "vits_enc.onnx",
        ),
        _export(
            VitsGen(model),
            gen_args,
            ["z", "ge", "mask"],
            ["audio"],
            out_dir / "vits_gen.onnx",
        ),
    ]
