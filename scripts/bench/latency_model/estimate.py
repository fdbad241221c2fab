"""Board latency estimate of one graph call (ESTIMATE, not a measurement):
per-graph QCS8550 latency from its MACs and bytes.

A roofline fitted to the reference port's measured per-graph timings
(scripts/bench/latency_model/: count.py counts an ONNX graph, fit.py and
calibrate.py fit and pick the model).  For other benchmarks:

    from scripts.bench.latency_model.estimate import estimate, board_model
    est = estimate("t2s_decode_L768.onnx")          # Estimate: .seconds, .cost
    est = estimate(path, kv_len=384)                 # priced at another KV bucket

The report of every engine is ``python -m scripts.bench.latency_model``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import onnx

from scripts.bench.latency_model.calibrate import board_model
from scripts.bench.latency_model.count import GraphCost, graph_cost, load
from scripts.bench.latency_model.fit import BoardModel

__all__ = ["Estimate", "board_model", "estimate", "predict"]


@dataclass(frozen=True)
class Estimate:
    """Estimated board latency of one call (not a measurement)."""

    graph: str
    seconds: float
    cost: GraphCost
    model: str  # the fitted model's label

    @property
    def ms(self) -> float:
        return self.seconds * 1e3


def _kv_mask(model: onnx.ModelProto) -> tuple[int, int]:
    """(KV length, bytes) of the decode graph's additive ``mask`` input."""
    for v in model.graph.input:
        if v.name == "mask":
            dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
            itemsize = onnx.helper.tensor_dtype_to_np_dtype(
                v.type.tensor_type.elem_type
            ).itemsize
            return dims[-1], math.prod(dims) * itemsize
    raise ValueError("kv_len: the graph has no 'mask' input giving its KV length")


def at_kv_len(
    c: GraphCost, graph_len: int, kv_len: int, mask_bytes: int = 0
) -> GraphCost:
    """``c`` priced at ``kv_len`` cache rows: KV reads, the mask and attention
    MACs scale with the rows (exact for a decode step; the rest is unchanged)."""
    if c.kv_bytes == 0:
        raise ValueError(f"{c.name}: kv_len given but the graph has no KV-cache input")
    if kv_len <= 0:
        raise ValueError(f"kv_len must be positive, got {kv_len}")
    f = kv_len / graph_len
    kv = round(c.kv_bytes * f)
    attn = round(c.attention_macs * f)
    mask = round(mask_bytes * f)
    return dataclasses.replace(
        c,
        kv_bytes=kv,
        input_bytes=c.input_bytes - c.kv_bytes - mask_bytes + kv + mask,
        attention_macs=attn,
        macs=c.macs - c.attention_macs + attn,
    )


def estimate(
    onnx_path: str | Path, kv_len: int | None = None, model: BoardModel | None = None
) -> Estimate:
    """Estimated QCS8550 latency of one call of the graph at ``onnx_path``
    (the profiled-timings model unless ``model``)."""
    path = Path(onnx_path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such ONNX file")
    proto = load(path)
    c = graph_cost(proto, path.stem)
    if kv_len is not None:
        length, mask_bytes = _kv_mask(proto)
        c = at_kv_len(c, length, kv_len, mask_bytes)
    m = model or board_model("profiled")
    return Estimate(c.name, m.seconds(c.features()), c, m.label)


predict = estimate  # the name gptsovits/clone.py calls it by
