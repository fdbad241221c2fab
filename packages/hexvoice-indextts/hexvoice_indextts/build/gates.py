"""The CPU gate of a bucketed graph: each case is a clip padded into the
graph's bucket, with the port's outputs for the clip alone in float32 (what
upstream computes) and float64 (the exact value); the graph passes when its
error against float64 over all cases is within the float32 floor
(scripts/common/floor.rel_gate)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import torch
from scripts.common.build.onnx_export import GraphSpec
from scripts.common.build.runners import cpu_runner
from scripts.common.floor import in_float64, rel_gate
from scripts.common.gate_result import GateResult

#: a graph's error bound against float64 where upstream's float32 is closer
#: (every port's float32 measured 3e-7 to 4e-6 from float64 on the tiny models)
MAX_REL_ERR: Final = 1e-5


@dataclass(frozen=True)
class Case:
    """One clip: the bucket's inputs and the unpadded references [1, n, ...]
    (a graph output with more rows than the clip is cut to n)."""

    inputs: Mapping[str, np.ndarray]
    upstream: np.ndarray
    exact: np.ndarray


def run_cases(spec: GraphSpec, cases: Sequence[Case]) -> list[np.ndarray]:
    """The graph's output per case on onnxruntime CPU, cut to the case's rows."""
    runner = cpu_runner(spec.path)
    outputs = []
    for case in cases:
        out = runner.run(case.inputs)[0]
        outputs.append(out[:, : case.exact.shape[1]] if out.ndim == 3 else out)
    return outputs


def gate_graph(
    spec: GraphSpec,
    cases: Sequence[Case],
    got: Sequence[np.ndarray] | None = None,
    bound: float = MAX_REL_ERR,
) -> GateResult:
    """rel_gate over all cases (``got``: the outputs when already run)."""
    got = run_cases(spec, cases) if got is None else got

    def flat(arrays: Iterable[np.ndarray]) -> np.ndarray:
        return np.concatenate([a.ravel() for a in arrays])

    return rel_gate(
        spec.name,
        bound,
        flat(c.exact for c in cases),
        flat(c.upstream for c in cases),
        flat(got),
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
            exact = model(*(x.double() if x.is_floating_point() else x for x in inputs))
            exact = exact.numpy()
    return upstream, exact
