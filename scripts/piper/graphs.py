"""The static sub-graphs of a Piper voice: text encoder, flow, decoder window.

Each builder cuts at the tensors found by cuts.py, pins shapes, folds, and
checks the ops against the plan for that part. Padding is always explicit: a
mask input marks real positions, and VITS already multiplies by that mask before
every conv and attention, so padded positions cannot leak into real ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from onnx import TensorProto, helper

from scripts.common.onnx_surgery import (
    ConversionError,
    TensorSpec,
    check_plan,
    extract,
    fold,
    node_by_name,
    retype_index_input,
)
from scripts.piper.cuts import PiperCuts

F32 = TensorProto.FLOAT

# Ops each NPU graph may hold after folding. They are what VITS's modules trace
# to and what the QNN HTP (QNN 2.51, v73, fp16) compiled for en_US-joe-medium;
# anything else is a layer we have not placed, and conversion stops on it.
ENC_PLAN = frozenset(
    # relative-position attention encoder + SDP conditioning (DDSConv, exact GELU)
    "Add Conv Div Equal Erf Gather MatMul Mul Pad Pow ReduceMean Relu Reshape "
    "Slice Softmax Split Sqrt Sub Transpose Unsqueeze Where".split()
)
FLOW_PLAN = frozenset(
    # residual coupling layers with WaveNet gates, reverse direction, mean-only
    "Add Concat Conv Mul Sigmoid Slice Split Sub Tanh".split()
)
DEC_PLAN = frozenset(
    # HiFiGAN (ResBlock1/2) + the frame-mask broadcast we add
    "Add Conv ConvTranspose Div LeakyRelu Mul Tanh Reshape Expand".split()
)
# Ops inside /dp/flows.* that cpu.DurationPredictor re-implements.
SDP_PLAN = frozenset(
    "Add And Cast Concat ConstantOfShape Conv CumSum Div Equal Erf Expand Gather "
    "GatherElements GatherND GreaterOrEqual LessOrEqual Mul Neg NonZero Not Pad Pow "
    "Range ReduceMean ReduceSum Reshape ScatterND Shape Slice Softmax Softplus Split "
    "Sqrt Squeeze Sub Transpose Unsqueeze Where Exp Log".split()
)


def channels(model: onnx.ModelProto) -> int:
    """Latent channels (inter_channels): the decoder's conv_pre input channels."""
    return _weight_dim(model, "/dec/conv_pre/Conv", 1)


def encoder(model: onnx.ModelProto, cuts: PiperCuts, phonemes: int) -> onnx.ModelProto:
    """ids [1,P] int32, x_mask [1,1,P] -> m_p, logs_p, dp_cond [1,C,P].

    The SDP's conditioning stack (pre -> DDSConv -> proj) only depends on the text
    encoding, so it rides along here; its GELU (Erf) compiles on the HTP.
    """
    c = channels(model)
    hidden = _hidden_channels(model)
    graph = extract(
        model,
        {
            cuts.ids: TensorSpec("ids", TensorProto.INT64, (1, phonemes)),
            cuts.x_mask: TensorSpec("x_mask", F32, (1, 1, phonemes)),
        },
        {
            cuts.m_p: TensorSpec("m_p", F32, (1, c, phonemes)),
            cuts.logs_p: TensorSpec("logs_p", F32, (1, c, phonemes)),
            cuts.dp_cond: TensorSpec("dp_cond", F32, (1, hidden, phonemes)),
        },
        f"enc_P{phonemes}",
    )
    retype_index_input(graph, "ids")
    graph = fold(graph)
    check_plan(graph, ENC_PLAN)
    return graph


def flow(model: onnx.ModelProto, cuts: PiperCuts, frames: int) -> onnx.ModelProto:
    """z_p [1,C,F], y_mask [1,1,F] -> z [1,C,F] (already multiplied by y_mask)."""
    c = channels(model)
    graph = extract(
        model,
        {
            cuts.z_p: TensorSpec("z_p", F32, (1, c, frames)),
            cuts.y_mask: TensorSpec("y_mask", F32, (1, 1, frames)),
        },
        {cuts.dec_in: TensorSpec("z", F32, (1, c, frames))},
        f"flow_F{frames}",
    )
    graph = fold(graph)
    check_plan(graph, FLOW_PLAN)
    return graph


def decoder_window(
    model: onnx.ModelProto, cuts: PiperCuts, frames: int, hop: int
) -> onnx.ModelProto:
    """z [1,C,W], frame_mask [1,1,W] -> audio [1,1,W*hop].

    The whole-sentence decoder does not fit a static graph (and for GPT-SoVITS's
    generator did not fit the v73's TCM), so it runs on fixed windows; the frame
    mask zeroes every conv output beyond the real frames, which makes a window
    holding a sequence shorter than itself exact (daemon/sdk/audio/windows.py).
    """
    graph = decoder_dynamic(model, cuts)
    c = channels(model)
    _pin(graph.graph.input[0], (1, c, frames))
    _pin(graph.graph.output[0], (1, 1, frames * hop))
    graph.graph.input.append(
        onnx.helper.make_tensor_value_info("frame_mask", F32, [1, 1, frames])
    )
    masked = f"{graph.graph.input[0].name}_masked"
    for node in graph.graph.node:
        node.input[:] = [masked if i == "z" else i for i in node.input]
    graph.graph.node.insert(
        0, onnx.helper.make_node("Mul", ["z", "frame_mask"], [masked], name="z/mask")
    )
    graph.graph.name = f"dec_W{frames}"
    post = node_by_name(graph.graph, "/dec/conv_post/Conv").name
    # conv_post's tail is cut off by the caller anyway; no need to mask it.
    mask_conv_outputs(graph, "frame_mask", frames, skip=[post])
    graph = fold(graph)
    check_plan(graph, DEC_PLAN)
    return graph


def decoder_dynamic(model: onnx.ModelProto, cuts: PiperCuts) -> onnx.ModelProto:
    """Whole-sequence decoder, z [1,C,frames] -> audio [1,1,samples] (reference)."""
    c = channels(model)
    return extract(
        model,
        {cuts.dec_in: TensorSpec("z", F32, (1, c, "frames"))},
        {cuts.audio: TensorSpec("audio", F32, (1, 1, "samples"))},
        "dec_full",
    )


def sdp_dynamic(model: onnx.ModelProto, cuts: PiperCuts) -> onnx.ModelProto:
    """The SDP reverse flows as in the voice (reference for the numpy port)."""
    hidden = _hidden_channels(model)
    return extract(
        model,
        {
            cuts.dp_cond: TensorSpec("dp_cond", F32, (1, hidden, "t")),
            cuts.x_mask: TensorSpec("x_mask", F32, (1, 1, "t")),
            cuts.dp_noise: TensorSpec("noise", F32, (1, 2, "t")),
        },
        {cuts.logw: TensorSpec("logw", F32, (1, 1, "t"))},
        "sdp_full",
    )


def hop_length(model: onnx.ModelProto) -> int:
    """Samples per frame: product of the decoder's ConvTranspose strides."""
    hop = 1
    for node in model.graph.node:
        if node.name.startswith("/dec/") and node.op_type == "ConvTranspose":
            (stride,) = [a.ints[0] for a in node.attribute if a.name == "strides"]
            hop *= stride
    return hop


def _hidden_channels(model: onnx.ModelProto) -> int:
    """The SDP's hidden channels: its proj conv's output channels."""
    return _weight_dim(model, "/dp/proj/Conv", 0)


def _weight_dim(model: onnx.ModelProto, conv: str, axis: int) -> int:
    """Size ``axis`` of the weight of the Conv node named ``conv``."""
    weight = node_by_name(model.graph, conv).input[1]
    for tensor in model.graph.initializer:
        if tensor.name == weight:
            return int(tensor.dims[axis])
    raise ValueError(f"{conv}: weight not found")


def _pin(value: onnx.ValueInfoProto, shape: tuple[int, ...]) -> None:
    dims = value.type.tensor_type.shape.dim
    for dim, size in zip(dims, shape, strict=True):
        dim.Clear()
        dim.dim_value = size


def flow_context(flow: onnx.ModelProto) -> int:
    """Frames of context each side the flow needs: its convs' radii, summed.

    The coupling layers are chained, so a frame depends on at most this many
    frames either way; windows of the flow overlapping by it are exact.
    """
    radius = 0
    for node in flow.graph.node:
        if node.op_type == "Conv":
            a = {x.name: list(x.ints) for x in node.attribute}
            kernel = a.get("kernel_shape", [1])[0]
            radius += a.get("dilations", [1])[0] * (kernel - 1) // 2
    return radius


def mask_conv_outputs(
    model: onnx.ModelProto, frame_mask: str, frames: int, skip: Sequence[str] = ()
) -> int:
    """Zero every Conv/ConvTranspose output beyond the valid length.

    A window shorter than the graph (a sentence under one window) must decode as
    if the sequence ended there: each conv of the full-length decode sees zero
    padding right after the last frame, so after every conv we multiply by the
    frame mask repeated to that tensor's time resolution. `frame_mask` is a
    [1, 1, frames] graph input; resolutions must be whole multiples of it.
    Returns the number of masks inserted.
    """
    model_inf = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    lengths = {
        vi.name: vi.type.tensor_type.shape.dim[-1].dim_value
        for vi in model_inf.graph.value_info
    }
    graph = model.graph
    masks: dict[int, str] = {frames: frame_mask}
    inserted = 0
    for node in list(graph.node):
        if node.op_type not in ("Conv", "ConvTranspose") or node.name in skip:
            continue
        out = node.output[0]
        length = lengths.get(out, 0)
        if length <= 0 or length % frames:
            raise ConversionError(
                f"{graph.name}: node {node.name!r} output length {length} is not a "
                f"multiple of the {frames}-frame window"
            )
        if length not in masks:
            masks[length] = _upsampled_mask(graph, frame_mask, frames, length)
        raw = f"{out}_unmasked"
        node.output[0] = raw
        pos = list(graph.node).index(node) + 1
        mul = helper.make_node(
            "Mul", [raw, masks[length]], [out], name=f"{node.name}/mask"
        )
        graph.node.insert(pos, mul)
        inserted += 1
    return inserted


def _upsampled_mask(graph: onnx.GraphProto, mask: str, frames: int, length: int) -> str:
    """[1,1,frames] -> [1,1,length] by repeating each frame length/frames times."""
    rate = length // frames
    name = f"{mask}_x{rate}"
    shape4 = helper.make_tensor(f"{name}_s4", TensorProto.INT64, [4], [1, 1, frames, 1])
    wide = helper.make_tensor(
        f"{name}_sw", TensorProto.INT64, [4], [1, 1, frames, rate]
    )
    flat = helper.make_tensor(f"{name}_sf", TensorProto.INT64, [3], [1, 1, length])
    graph.initializer.extend([shape4, wide, flat])
    nodes = [
        helper.make_node("Reshape", [mask, shape4.name], [f"{name}_4d"]),
        helper.make_node("Expand", [f"{name}_4d", wide.name], [f"{name}_wide"]),
        helper.make_node("Reshape", [f"{name}_wide", flat.name], [name]),
    ]
    for i, node in enumerate(nodes):
        node.name = f"{name}/{node.op_type}_{i}"
        graph.node.insert(i, node)
    return name
