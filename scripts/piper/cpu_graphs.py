"""The CPU backend's twins of a Piper bundle's graphs: same tensors, any length.

The NPU binaries are compiled from the static graphs of graphs.py (buckets,
padding, masks); onnxruntime on the CPU takes symbolic lengths, so the bundle's
onnx/<key>.onnx are these instead and the engine runs the real length there
(daemon/engines/piper/pipeline.py): no bucket padding, fewer decoder windows.
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from scripts.common.onnx_surgery import TensorSpec, extract, retype_index_input
from scripts.piper.cuts import PiperCuts
from scripts.piper.graphs import F32, _hidden_channels, channels, decoder_dynamic


def any_length(model: onnx.ModelProto, cuts: PiperCuts, key: str) -> onnx.ModelProto:
    """The graph `key` (enc_P*, flow_F*, dec_W*) with the length axis symbolic."""
    c = channels(model)
    if key.startswith("enc_P"):
        hidden = _hidden_channels(model)
        graph = extract(
            model,
            {
                cuts.ids: TensorSpec("ids", TensorProto.INT64, (1, "phonemes")),
                cuts.x_mask: TensorSpec("x_mask", F32, (1, 1, "phonemes")),
            },
            {
                cuts.m_p: TensorSpec("m_p", F32, (1, c, "phonemes")),
                cuts.logs_p: TensorSpec("logs_p", F32, (1, c, "phonemes")),
                cuts.dp_cond: TensorSpec("dp_cond", F32, (1, hidden, "phonemes")),
            },
            key,
        )
        retype_index_input(graph, "ids")
    elif key.startswith("flow_F"):
        graph = extract(
            model,
            {
                cuts.z_p: TensorSpec("z_p", F32, (1, c, "frames")),
                cuts.y_mask: TensorSpec("y_mask", F32, (1, 1, "frames")),
            },
            {cuts.dec_in: TensorSpec("z", F32, (1, c, "frames"))},
            key,
        )
    elif key.startswith("dec_W"):
        # Windows cut to the sequence are never padded (windows.py `fit`), so
        # the mask only multiplies z (all ones): the input the NPU graph has.
        graph = decoder_dynamic(model, cuts)
        graph.graph.input.append(
            onnx.helper.make_tensor_value_info("frame_mask", F32, [1, 1, "frames"])
        )
        masked = "z_masked"
        for node in graph.graph.node:
            node.input[:] = [masked if i == "z" else i for i in node.input]
        graph.graph.node.insert(
            0, helper.make_node("Mul", ["z", "frame_mask"], [masked], name="z/mask")
        )
        graph.graph.name = key
    else:
        raise ValueError(f"no piper graph {key!r}")
    # Not folded: onnxruntime optimises at load, and the shape arithmetic stays.
    return graph
