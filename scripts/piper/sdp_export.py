"""Read the SDP reverse flows' weights out of a Piper voice for the numpy port.

The flows run in graph order (VITS reverses its list and drops one unused flow
at export time, so we follow the traced nodes, not the module list). Each flow
is recognised by its traced nodes: ConvFlow has `pre/Conv`, Flip is a lone
negative-step Slice, ElementwiseAffine is Sub(m) -> Mul(exp(-logs)) -> Mul(mask).
Weights are found through the nodes that use them, so renamed initializers
(`onnx::Conv_123`) do not matter. `check_port` then runs the voice's own SDP
and the numpy port side by side, so a variant we do not implement is caught at
conversion time rather than as wrong durations on the board.

Stage ``sdp`` (``run``) writes the weights to the work dir's
``stage/cpu/sdp.npz``; the CPU gates run ``check_port`` on them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from daemon.engines.piper.cpu import AFFINE, CONV_FLOW, FLIP, DurationPredictor
from daemon.sdk.bundles.manifest import sha256_file
from scripts.common.build.stage import Results
from scripts.common.onnx_surgery import (
    ConversionError,
    UnplannedOpError,
    attrs,
    constant_input,
    node_by_name,
)
from scripts.piper.convert import PiperBuild
from scripts.piper.cuts import PiperCuts
from scripts.piper.graphs import SDP_PLAN, sdp_dynamic

# Max |logw| error of the numpy SDP vs onnxruntime on the voice's own graph; fp32
# accumulation-order noise is ~1e-5 here.
SDP_TOLERANCE = 1e-4
SDP_CHECK_PHONEMES = 100

_FLOW = re.compile(r"^/dp/flows\.(\d+)/")


@dataclass(frozen=True)
class SdpWeights:
    """The written sdp.npz: its arrays' count and sha256 (keys its readers)."""

    arrays: int
    sha256: str


def inputs(ctx: PiperBuild) -> Mapping[str, Any]:
    return {"voice": ctx.voice}


def outputs(ctx: PiperBuild) -> Iterable[Path]:
    return [ctx.sdp_file]


def run(ctx: PiperBuild, results: Results) -> SdpWeights:
    arrays = sdp_weights(onnx.load(ctx.voice))
    ctx.sdp_file.parent.mkdir(parents=True, exist_ok=True)
    np.savez(ctx.sdp_file, **arrays)
    return SdpWeights(len(arrays), sha256_file(ctx.sdp_file))


def sdp_weights(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Arrays for daemon.engines.piper.cpu.DurationPredictor (sdp.npz)."""
    graph = model.graph
    order: list[int] = []
    nodes: dict[int, list[onnx.NodeProto]] = {}
    for node in graph.node:
        hit = _FLOW.match(node.name)
        if not hit:
            continue
        if node.op_type not in SDP_PLAN:
            raise UnplannedOpError("sdp (CPU)", node.op_type, node.name, SDP_PLAN)
        index = int(hit.group(1))
        if index not in nodes:
            order.append(index)
            nodes[index] = []
        nodes[index].append(node)
    if not order:
        raise ConversionError("no /dp/flows.* nodes: voice has no stochastic SDP")
    out: dict[str, np.ndarray] = {}
    kinds: list[str] = []
    scalars: dict[str, set[float]] = {"tail_bound": set(), "bin_scale": set()}
    for pos, index in enumerate(order):
        prefix = f"/dp/flows.{index}/"
        names = {n.name for n in nodes[index]}
        if prefix + "pre/Conv" in names:
            kinds.append(CONV_FLOW)
            _conv_flow(model, prefix, f"flows.{pos}.", out, scalars)
        elif len(nodes[index]) == 1 and _is_flip(model, nodes[index][0]):
            kinds.append(FLIP)
        elif prefix + "Sub" in names:
            kinds.append(AFFINE)
            sub = node_by_name(graph, prefix + "Sub")
            scale = node_by_name(graph, prefix + "Mul")
            m, inv = constant_input(model, sub, 1), constant_input(model, scale, 1)
            if m is None or inv is None:
                raise ConversionError(f"{prefix}: affine flow without constant m/scale")
            out[f"flows.{pos}.m"], out[f"flows.{pos}.inv_scale"] = m, inv
        else:
            raise ConversionError(f"{prefix}: SDP flow of unknown kind")
    for key, values in scalars.items():
        if len(values) != 1:
            raise ConversionError(f"SDP flows disagree on {key}: {sorted(values)}")
        out[key] = np.array(values.pop(), dtype=np.float32)
    out["kinds"] = np.array(kinds)
    return {k: np.array(v, dtype=_dtype(v), order="C") for k, v in out.items()}


def _dtype(v: np.ndarray) -> np.dtype:
    return v.dtype if v.dtype.kind in "iuU" else np.dtype(np.float32)


def _is_flip(model: onnx.ModelProto, node: onnx.NodeProto) -> bool:
    steps = constant_input(model, node, 4)
    axes = constant_input(model, node, 3)
    return (
        node.op_type == "Slice"
        and steps is not None
        and axes is not None
        and steps.tolist() == [-1]
        and axes.tolist() == [1]
    )


def _conv(model: onnx.ModelProto, name: str) -> tuple[np.ndarray, np.ndarray, dict]:
    node = node_by_name(model.graph, name)
    w, b = constant_input(model, node, 1), constant_input(model, node, 2)
    if w is None or b is None:
        raise ConversionError(f"{name}: conv weights are not constants")
    return w, b, attrs(node)


def _conv_flow(
    model: onnx.ModelProto,
    prefix: str,
    key: str,
    out: dict[str, np.ndarray],
    scalars: dict[str, set[float]],
) -> None:
    graph = model.graph
    w, b, _ = _conv(model, prefix + "pre/Conv")
    out[key + "pre.w"], out[key + "pre.b"] = w[:, :, 0], b
    layer = 0
    while any(n.name == f"{prefix}convs/convs_sep.{layer}/Conv" for n in graph.node):
        q = f"{key}dds.{layer}."
        w, b, a = _conv(model, f"{prefix}convs/convs_sep.{layer}/Conv")
        (dilation,) = a["dilations"]
        if a["group"] != w.shape[0] or a["pads"] != [dilation * (w.shape[2] // 2)] * 2:
            raise ConversionError(
                f"{prefix}convs_sep.{layer}: not a depthwise same conv"
            )
        out[q + "sep.w"], out[q + "sep.b"] = w[:, 0, :], b
        out[q + "sep.dilation"] = np.array(dilation, dtype=np.int64)
        w, b, _ = _conv(model, f"{prefix}convs/convs_1x1.{layer}/Conv")
        out[q + "pw.w"], out[q + "pw.b"] = w[:, :, 0], b
        for norm, short in (("norms_1", "ln1"), ("norms_2", "ln2")):
            base = f"{prefix}convs/{norm}.{layer}/"
            gamma = constant_input(model, node_by_name(graph, base + "Mul"), 1)
            beta = constant_input(model, node_by_name(graph, base + "Add_1"), 1)
            eps = constant_input(model, node_by_name(graph, base + "Add"), 1)
            if gamma is None or beta is None or eps is None:
                raise ConversionError(f"{base}: layer norm without constant params")
            out[q + short + ".g"], out[q + short + ".b"] = gamma, beta
            out["ln_eps"] = eps.reshape(())
        layer += 1
    out["dds_layers"] = np.array(layer, dtype=np.int64)
    w, b, _ = _conv(model, prefix + "proj/Conv")
    out[key + "proj.w"], out[key + "proj.b"] = w[:, :, 0], b
    # proj emits (3 * bins - 1) values per half channel (widths, heights, inner
    # derivatives); the SDP's ConvFlows work on one half channel.
    if (w.shape[0] + 1) % 3:
        raise ConversionError(f"{prefix}proj: {w.shape[0]} outputs is not 3*bins-1")
    out["num_bins"] = np.array((w.shape[0] + 1) // 3, dtype=np.int64)
    low = constant_input(model, node_by_name(graph, prefix + "GreaterOrEqual"), 1)
    scale = constant_input(model, node_by_name(graph, prefix + "Div"), 1)
    if low is None or scale is None:
        raise ConversionError(f"{prefix}: spline bound/scale are not constants")
    scalars["tail_bound"].add(float(-low))
    scalars["bin_scale"].add(float(scale))


def check_port(
    model: onnx.ModelProto,
    cuts: PiperCuts,
    encoder: onnx.ModelProto,
    arrays: dict[str, np.ndarray],
) -> float:
    """Run the voice's own SDP flows and the numpy port on a real encoding.

    Catches a voice whose flows differ from what DurationPredictor implements
    (other spline constants, extra flow kinds) before a bundle is written.
    """
    import onnxruntime as ort

    cpu = ["CPUExecutionProvider"]
    bucket = encoder.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    t = min(SDP_CHECK_PHONEMES, bucket)
    rng = np.random.default_rng(0)
    ids = np.zeros((1, bucket), np.int32)
    ids[0, :t] = rng.integers(0, _vocab(encoder), t)
    mask = np.zeros((1, 1, bucket), np.float32)
    mask[..., :t] = 1.0
    enc = ort.InferenceSession(encoder.SerializeToString(), providers=cpu)
    _, _, cond = enc.run(None, {"ids": ids, "x_mask": mask})
    sdp = ort.InferenceSession(
        sdp_dynamic(model, cuts).SerializeToString(), providers=cpu
    )
    port = DurationPredictor.from_arrays(arrays)
    worst = 0.0
    for scale in (0.0, 0.8):
        noise = (rng.standard_normal((1, 2, t)) * scale).astype(np.float32)
        feed = {"dp_cond": cond[..., :t], "x_mask": mask[..., :t], "noise": noise}
        ref = sdp.run(None, feed)[0][0, 0]
        got = port.logw(cond[0, :, :t], mask[0, 0, :t], noise[0])
        err = float(np.abs(ref - got).max())
        if not np.isfinite(err) or err > SDP_TOLERANCE:
            raise ConversionError(
                f"numpy SDP differs from the voice's own flows by {err:.3g} "
                f"(> {SDP_TOLERANCE}) at noise_w={scale}: unknown SDP variant"
            )
        worst = max(worst, err)
    return worst


def _vocab(encoder: onnx.ModelProto) -> int:
    gather = next(n for n in encoder.graph.node if n.op_type == "Gather")
    table = next(t for t in encoder.graph.initializer if t.name == gather.input[0])
    return int(table.dims[0])
