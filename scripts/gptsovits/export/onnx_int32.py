"""Run an ONNX index path in int32 (the HTP has no int64 arithmetic).

The graph's int64 index inputs become int32; what they meet as data follows
(casts to int64 become casts to int32, int64 constants are narrowed after a range
check), while shape and axes operands, which ONNX requires in int64, stay.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from scripts.common.onnx_surgery import ConversionError

#: int32 range, for constants moved onto an int32 index path
INT32 = np.iinfo(np.int32)

# Operands the ONNX spec requires to be int64 (shapes, axes): left alone.
_SHAPE_OPERANDS = {
    "Reshape": {1},
    "Expand": {1},
    "Tile": {1},
    "Unsqueeze": {1},
    "Squeeze": {1},
    "ConstantOfShape": {0},
    "Slice": {1, 2, 3, 4},
    "Pad": {1},
    "ReduceSum": {1},
    "ReduceMean": {1},
    "ReduceMax": {1},
}


def narrow_int64(model: onnx.ModelProto, int32_inputs: set[str]) -> None:
    """Run the index path in int32: the casts back to int64 after the clipped
    inputs become int32 casts, and every int64 constant that meets that path as
    data (not as a shape or axes operand) becomes int32 (values are checked)."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    int32 = set(int32_inputs)
    for node in graph.node:  # ONNX graphs are topologically sorted
        data = [
            (i, name)
            for i, name in enumerate(node.input)
            if i not in _SHAPE_OPERANDS.get(node.op_type, set())
        ]
        if not any(name in int32 for _, name in data):
            continue
        if node.op_type == "Cast":
            to = next(a for a in node.attribute if a.name == "to")
            if to.i == TensorProto.INT64:
                to.i = TensorProto.INT32
            if to.i == TensorProto.INT32:
                int32.add(node.output[0])
            continue
        for _, name in data:
            init = inits.get(name)
            if init is not None and init.data_type == TensorProto.INT64:
                a = numpy_helper.to_array(init)
                if a.size and (a.min() < INT32.min or a.max() > INT32.max):
                    raise ConversionError(f"constant {name} does not fit int32")
                init.CopyFrom(numpy_helper.from_array(a.astype(np.int32), name))
        if node.op_type not in ("Gather", "Shape") and node.op_type != "Equal":
            int32.update(node.output)
    del graph.value_info[:]
