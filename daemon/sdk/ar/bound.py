"""Graphs whose inputs and outputs are allocated once and bound (zero-copy).

On the QNN backend the buffers come from ``Runner.empty`` (rpcmem on a board,
so the NPU reads them without copies) and ``execute`` runs on them in place; the
CPU backend emulates binding. Dtypes are what the backend computes on: the NPU
binaries' (e.g. float16 K/V), or for onnxruntime the ONNX file's own (float32),
since the CPU backend exists for fp32 parity.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from daemon.sdk.bundles.needs import expect
from daemon.sdk.graphs import Runner


class BoundGraph:
    """A graph whose inputs and outputs are allocated and bound once."""

    def __init__(self, runner: Runner, shapes: Mapping[str, tuple[int, ...]]) -> None:
        self.runner = runner
        self._shapes = dict(shapes)
        self._dtypes = expect(runner, self._shapes)
        self._out = dict(runner.output_index)
        self.buffers: dict[str, np.ndarray] = {}
        self.graph_seconds = 0.0  # of the last execute

    def bind(self) -> dict[str, np.ndarray]:
        """The bound buffers by tensor name (allocated and bound on first use)."""
        if not self.buffers:
            bufs = {
                n: self.runner.empty(s, self._dtypes[n])
                for n, s in self._shapes.items()
            }
            for name, arr in bufs.items():
                self.runner.bind(self._out.get(name, name), arr)
            self.buffers = bufs
        return self.buffers

    def execute(self) -> None:
        self.runner.execute()
        self.graph_seconds = self.runner.last_execute_s
