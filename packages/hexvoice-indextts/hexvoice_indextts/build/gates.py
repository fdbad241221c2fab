"""The CPU gate of a bucketed graph: each case is a clip padded into the
graph's bucket, with the port's outputs for the clip alone in float32 (what
upstream computes) and float64 (the exact value); the graph passes when its
error against float64 over all cases is within the float32 floor
(scripts/common/floor.rel_gate)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scripts.common.build.onnx_export import GraphSpec
from scripts.common.build.runners import cpu_runner
from scripts.common.floor import in_float64, rel_gate
from scripts.common.gate_result import GateResult


@dataclass(frozen=True)
class Case:
    """One clip: the bucket's inputs and the unpadded references [1, n, ...]
    (a graph output with more rows than the clip is cut to n)."""

    inputs: Mapping[str, np.ndarray]
    upstream: np.ndarray
    exact: np.ndarray


def gate_graph(spec: GraphSpec, cases: Sequence[Case], bound: float) -> GateResult:
    runner = cpu_runner(spec.path)
    got, upstream, exact = [], [], []
    for case in cases:
        out = runner.run(case.inputs)[0]
        if out.ndim == 3:
            out = out[:, : case.exact.shape[1]]
        got.append(out.ravel())
        upstream.append(case.upstream.ravel())
        exact.append(case.exact.ravel())
    return rel_gate(
        spec.name,
        bound,
        np.concatenate(exact),
        np.concatenate(upstream),
        np.concatenate(got),
    )


def gated_buckets(
    graphs: Iterable[GraphSpec], buckets: Sequence[int], low: int = 1, scale: int = 1
) -> Iterator[tuple[GraphSpec, int, tuple[int, ...]]]:
    """Per graph (in ascending bucket order): its bucket and the clip lengths
    it is gated on, in units of ``scale`` per bucket slot: the full bucket,
    one past the next smaller bucket (at least ``low``), and an odd length
    between."""
    ordered = sorted(buckets)
    for spec, bucket in zip(graphs, ordered, strict=True):
        i = ordered.index(bucket)
        smaller = ordered[i - 1] if i else 0
        first, full = max(low, scale * smaller + 1), scale * bucket
        yield spec, bucket, tuple(sorted({full, first, (first + full) // 2 | 1}))


def port_pair(
    model: torch.nn.Module, *inputs: torch.Tensor
) -> tuple[np.ndarray, np.ndarray]:
    """(float32, float64) outputs of the port on the clip alone: what
    upstream computes, and the exact value."""
    with torch.no_grad():
        upstream = model(*inputs).numpy()
        with in_float64(model):
            exact = model(*(x.double() for x in inputs)).numpy()
    return upstream, exact
