"""Where a Piper VITS graph is cut, found from the module scopes torch exported.

Piper's `export_onnx.py` traces `SynthesizerTrn.infer` (VITS), so node names carry
the module path: `/enc_p/...` (text encoder), `/dp/...` (stochastic duration
predictor, SDP), `/flow/...` (reverse residual-coupling flow), `/dec/...`
(HiFiGAN). The cuts sit on the tensors that cross between these modules:

    ids, x_mask -> [enc_p + SDP conditioning] -> m_p, logs_p, dp_cond     (HTP)
    dp_cond, noise_w * N(0,1) -> [SDP spline flows] -> logw                (CPU)
    logw -> ceil durations -> path; z_p = m_p[path] + noise * e^logs_p[path]  (CPU)
    z_p, y_mask -> [flow] -> z                                             (HTP)
    z windows -> [dec] -> audio                                            (HTP)

Why these cuts: the SDP flows select spline bins per element with data-dependent
indexing (NonZero, GatherND, ScatterND, CumSum) that the HTP cannot run, and they
are tiny (2 channels x phonemes); the length regulation changes the sequence
length, which a static graph cannot do. Everything before them depends only on
the phoneme sequence (one static shape per phoneme bucket), everything after
only on the frame sequence (frame buckets, vocoder windows).
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from scripts.common.onnx_surgery import (
    ConversionError,
    consumers,
    node_by_name,
    only_consumer,
    producers,
)


@dataclass(frozen=True)
class PiperCuts:
    """Tensor names (in the original voice graph) at each cut."""

    ids: str
    x_mask: str
    enc_hidden: str
    m_p: str
    logs_p: str
    dp_cond: str
    dp_noise: str
    logw: str
    z_p: str
    y_mask: str
    dec_in: str
    audio: str


def find_cuts(model: onnx.ModelProto) -> PiperCuts:
    graph = model.graph
    input_names = {i.name for i in graph.input}
    if "sid" in input_names:
        # Multi-speaker voices add emb_g(sid) conditioning to dp, flow and dec.
        raise ConversionError(
            "multi-speaker Piper voices (graph input 'sid') are not supported yet"
        )
    for name in ("input", "input_lengths", "scales"):
        if name not in input_names:
            raise ConversionError(
                f"voice graph lacks input {name!r}: not a Piper voice"
            )
    made_by = producers(graph)

    enc_proj = node_by_name(graph, "/enc_p/proj/Conv")
    enc_mul = only_consumer(graph, enc_proj.output[0], "Mul")
    x_mask = _other(enc_mul, enc_proj.output[0])
    enc_split = only_consumer(graph, enc_mul.output[0], "Split")
    dp_pre = node_by_name(graph, "/dp/pre/Conv")
    dp_proj = node_by_name(graph, "/dp/proj/Conv")
    dp_cond = only_consumer(graph, dp_proj.output[0], "Mul").output[0]

    dp_rand, rand = _random_nodes(graph)
    dp_noise = only_consumer(graph, dp_rand.output[0], "Mul").output[0]
    logw = node_by_name(graph, "/dp/Split").output[0]
    z_p = _follow_to(graph, rand.output[0], "Add", steps=4)

    conv_pre = node_by_name(graph, "/dec/conv_pre/Conv")
    dec_in = conv_pre.input[0]
    masked = made_by.get(dec_in)
    if masked is None or masked.op_type != "Mul":
        raise ConversionError("decoder input is not the masked flow output")
    casts = [i for i in masked.input if made_by.get(i) and made_by[i].op_type == "Cast"]
    if len(casts) != 1:
        raise ConversionError("cannot tell the frame mask from z at the decoder input")
    conv_post = node_by_name(graph, "/dec/conv_post/Conv")
    audio = only_consumer(graph, conv_post.output[0], "Tanh").output[0]
    return PiperCuts(
        ids="input",
        x_mask=x_mask,
        enc_hidden=dp_pre.input[0],
        m_p=enc_split.output[0],
        logs_p=enc_split.output[1],
        dp_cond=dp_cond,
        dp_noise=dp_noise,
        logw=logw,
        z_p=z_p,
        y_mask=casts[0],
        dec_in=dec_in,
        audio=audio,
    )


def _other(node: onnx.NodeProto, known: str) -> str:
    rest = [i for i in node.input if i != known]
    if len(rest) != 1:
        raise ConversionError(f"node {node.name!r} is not a binary op on {known!r}")
    return rest[0]


def _random_nodes(graph: onnx.GraphProto) -> tuple[onnx.NodeProto, onnx.NodeProto]:
    """The SDP's noise and the prior's noise: the only random ops VITS infer has."""
    randoms = [n for n in graph.node if n.op_type.startswith("Random")]
    in_dp = [n for n in randoms if n.name.startswith("/dp/")]
    outside = [n for n in randoms if not n.name.startswith("/dp/")]
    if len(in_dp) != 1 or len(outside) != 1 or len(randoms) != 2:
        names = ", ".join(f"{n.op_type} {n.name!r}" for n in randoms)
        raise ConversionError(
            f"expected one random op in the duration predictor and one for the prior "
            f"noise, found: {names or 'none'}"
        )
    return in_dp[0], outside[0]


def _follow_to(graph: onnx.GraphProto, tensor: str, op_type: str, steps: int) -> str:
    """Follow single consumers from `tensor` until a node of `op_type`."""
    for _ in range(steps):
        users = consumers(graph, tensor)
        if len(users) != 1:
            break
        tensor = users[0].output[0]
        if users[0].op_type == op_type:
            return tensor
    raise ConversionError(
        f"prior noise does not reach an {op_type} (z_p) where expected"
    )
