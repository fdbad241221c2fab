"""The graphs the parity gates drive, as ``Runner``s on the daemon's two
backends (daemon/sdk/graphs.py): an ONNX graph on onnxruntime CPU
(``cpu_runner``) or compiled binaries on the x86 HTP simulator through qnnrt
(``Simulator``).  A gate feeds a graph the inputs its reference gets, through
exactly the code the board runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.sdk.bundles.manifest import TensorSpec, tensor_spec
from daemon.sdk.graphs import CpuRunner, QnnRunner


@dataclass(frozen=True)
class _Io:
    """A graph's tensor names in order (what a Runner is built from)."""

    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]


def cpu_runner(path: Path, key: str | None = None) -> CpuRunner:
    """The fp32 (or fp16-KV) ONNX graph at ``path`` on onnxruntime CPU."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def specs(args: Any) -> tuple[TensorSpec, ...]:
        return tuple(TensorSpec(a.name, a.type, tuple(a.shape)) for a in args)

    io = _Io(specs(session.get_inputs()), specs(session.get_outputs()))
    return CpuRunner(key or Path(path).stem, session, io)


class Simulator:
    """One qnnrt backend (the x86 HTP simulator); opens binaries as Runners.

    Each ``open`` closes what the last one opened, so one gate's binaries are
    loaded at a time.
    """

    def __init__(self) -> None:
        import qnnrt

        self._qnnrt = qnnrt
        self.backend = qnnrt.Backend()
        self._group: Any = None

    def open(self, paths: Mapping[str, Path]) -> dict[str, QnnRunner]:
        self._close_group()
        self._group = self._qnnrt.ContextGroup.open(self.backend, list(paths.values()))
        runners = {}
        for key, ctx in zip(paths, self._group.contexts, strict=True):
            graph = ctx.graph()
            io = _Io(
                tuple(tensor_spec(t) for t in graph.inputs),
                tuple(tensor_spec(t) for t in graph.outputs),
            )
            runners[key] = QnnRunner(key, graph, io)
        return runners

    def runner(self, path: Path, key: str | None = None) -> QnnRunner:
        key = key or Path(path).stem
        return self.open({key: path})[key]

    def _close_group(self) -> None:
        if self._group is not None:
            self._group.close()
            self._group = None

    def close(self) -> None:
        self._close_group()
        self.backend.close()
