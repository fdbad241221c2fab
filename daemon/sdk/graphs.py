"""One graph interface, two backends: qnnrt (board or simulator) and onnxruntime CPU.

Engines see ``Runner`` objects only: inputs by name, outputs by index, optional
zero-copy ``bind`` + ``execute``.  The QNN backend loads the binaries of the
bundles it is given as one multi-context group (the service opens one bundle at a
time, so each engine can be evicted alone); the CPU backend runs the bundle's fp32
ONNX graphs (for development and parity) and emulates binding with copies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np

from daemon.sdk.bundles.manifest import Bundle, BundleError, GraphSpec, TensorSpec

if TYPE_CHECKING:
    import qnnrt

BACKENDS: Final = ("qnn", "cpu")

#: Called between the steps of a load; raises to stop it (a stopping service).
Checkpoint = Callable[[], None]


def go_on() -> None:
    """The checkpoint of a load nobody stops."""


class Runner(Protocol):
    """A graph as engines see it.  ``inputs``/``outputs`` are what THIS backend
    computes on (the NPU binary's dtypes, or the fp32 ONNX file's on the CPU)."""

    key: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    output_index: Mapping[str, int]
    stats: GraphStats
    #: Runs before every graph call.  While a service loads and warms up it is
    #: the load's checkpoint, so a stop lands within one graph call even in the
    #: middle of an engine's warm-up; afterwards it is ``go_on``.
    gate: Checkpoint

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]: ...

    def bind(self, key: str | int, array: np.ndarray) -> None: ...

    def execute(self) -> None: ...

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A zeroed buffer the graph reads without copies (rpcmem on a board)."""

    @property
    def last_execute_s(self) -> float:
        """Seconds inside the backend's execute call, for the last run/execute."""


@dataclass
class GraphStats:
    calls: int = 0
    seconds: float = 0.0

    def add(self, seconds: float) -> None:
        self.calls += 1
        self.seconds += seconds


class QnnRunner:
    def __init__(
        self, key: str, graph: qnnrt.Graph, spec: Any, gate: Checkpoint = go_on
    ) -> None:
        self.key = key
        self.gate = gate
        self.graph = graph
        self.inputs = spec.inputs
        self.outputs = spec.outputs
        self.output_index = graph.output_index
        self.stats = GraphStats()

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        self.gate()
        out = self.graph.run(feeds)
        self.stats.add(self.graph.last_wall_s)
        return out

    def bind(self, key: str | int, array: np.ndarray) -> None:
        self.graph.bind(key, array)

    def execute(self) -> None:
        self.gate()
        self.graph.execute()
        self.stats.add(self.graph.last_wall_s)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return self.graph.context.backend.empty(shape, dtype)

    @property
    def last_execute_s(self) -> float:
        return self.graph.last_execute_s


class CpuRunner:
    """onnxruntime CPU session over the bundle's fp32 ONNX graph."""

    def __init__(
        self, key: str, session: Any, spec: Any, gate: Checkpoint = go_on
    ) -> None:
        self.key = key
        self.gate = gate
        self.session = session
        self.stats = GraphStats()
        self._last_s = 0.0
        onnx_in = {a.name: _spec(a) for a in session.get_inputs()}
        onnx_out = {a.name: _spec(a) for a in session.get_outputs()}
        self._names = list(onnx_out)
        for kind, want, have in (
            ("inputs", spec.inputs, onnx_in),
            ("outputs", spec.outputs, onnx_out),
        ):
            if {t.name for t in want} != set(have):
                raise BundleError(
                    f"graph {key}: ONNX {kind} {sorted(have)} do not match the "
                    f"manifest {[t.name for t in want]}"
                )
        # The manifest (binary) order, with the dtypes onnxruntime computes on.
        self.inputs = tuple(onnx_in[t.name] for t in spec.inputs)
        self.outputs = tuple(onnx_out[t.name] for t in spec.outputs)
        self.output_index = {t.name: i for i, t in enumerate(spec.outputs)}
        self._perm = [self._names.index(t.name) for t in spec.outputs]
        self._in_names = {t.name for t in spec.inputs}
        self._bound_in: dict[str, np.ndarray] = {}
        self._bound_out: dict[int, np.ndarray] = {}

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        unknown = set(feeds) - self._in_names
        if unknown:
            raise ValueError(
                f"graph {self.key}: unknown input(s) {sorted(unknown)}; "
                f"expected {sorted(self._in_names)}"
            )
        merged = {**self._bound_in, **feeds}
        missing = self._in_names - set(merged)
        if missing:
            raise ValueError(f"graph {self.key}: missing input(s) {sorted(missing)}")
        self.gate()
        t0 = time.perf_counter()
        raw = self.session.run(None, merged)
        self._last_s = time.perf_counter() - t0
        self.stats.add(self._last_s)
        outs = [raw[i] for i in self._perm]
        for i, arr in self._bound_out.items():
            np.copyto(arr, outs[i])
            outs[i] = arr
        return outs

    def bind(self, key: str | int, array: np.ndarray) -> None:
        if isinstance(key, int):
            self._bound_out[key] = array
        elif key in self._in_names:
            self._bound_in[key] = array
        elif key in self.output_index:
            self._bound_out[self.output_index[key]] = array
        else:
            raise KeyError(f"graph {self.key} has no tensor {key!r}")

    def execute(self) -> None:
        self.run({})

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.zeros(shape, dtype)

    @property
    def last_execute_s(self) -> float:
        return self._last_s


#: onnxruntime type strings → numpy dtype names
_ORT_DTYPES: Final = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(uint8)": "uint8",
    "tensor(uint16)": "uint16",
    "tensor(int8)": "int8",
}


def _spec(arg: Any) -> TensorSpec:
    shape = tuple(int(d) if isinstance(d, int) else -1 for d in arg.shape)
    return TensorSpec(arg.name, _ORT_DTYPES.get(arg.type, arg.type), shape)


def _graph(context: qnnrt.Context, spec: GraphSpec) -> qnnrt.Graph:
    """The graph ``spec`` names in ``context`` (no name: the binary's only one)."""
    try:
        return context.graph(spec.graph)
    except (KeyError, ValueError) as exc:
        raise BundleError(f"graph {spec.key}: {exc.args[0]}") from None


class GraphHost:
    """Opens the graphs of one or more bundles on one backend; owns them."""

    def __init__(
        self,
        backend: str = "qnn",
        *,
        lib_dir: str | None = None,
        power: str | None = None,
        log_level: str | None = None,
        threads: int | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r}: expected one of {BACKENDS}")
        self.backend = backend
        self._lib_dir, self._power, self._log_level = lib_dir, power, log_level
        self._threads = threads
        self._qnn: qnnrt.Backend | None = None
        self.group: qnnrt.ContextGroup | None = None

    def open(
        self, bundles: Sequence[Bundle], checkpoint: Checkpoint = go_on
    ) -> list[dict[str, Runner]]:
        """Runners for every graph of every bundle (QNN: one context group, each
        binary file loaded once however many graphs it holds).
        ``checkpoint()`` runs before each graph (QNN: each binary) loads, and
        becomes the runners' ``gate``; it may raise to stop the load there."""
        if self.backend == "cpu":
            return [self._open_cpu(b, checkpoint) for b in bundles]
        import qnnrt

        checkpoint()
        if self._qnn is None:
            self._qnn = qnnrt.Backend(
                lib_dir=self._lib_dir, power=self._power, log_level=self._log_level
            )
        # Per bundle, not across bundles: an engine binds its own buffers to its
        # graphs, so two bundles never share a context, even of one file.
        files = [(i, f) for i, b in enumerate(bundles) for f in b.binaries]
        paths = [bundles[i].path(f) for i, f in files]
        self.group = qnnrt.ContextGroup.open(self._qnn, paths, before_each=checkpoint)
        contexts = dict(zip(files, self.group.contexts, strict=True))
        out: list[dict[str, Runner]] = [{} for _ in bundles]
        for i, b in enumerate(bundles):
            for key, spec in b.graphs.items():
                graph = _graph(contexts[i, spec.file], spec)
                out[i][key] = QnnRunner(key, graph, spec, checkpoint)
        return out

    def _open_cpu(self, bundle: Bundle, checkpoint: Checkpoint) -> dict[str, Runner]:
        import onnxruntime as ort

        so = ort.SessionOptions()
        if self._threads:
            so.intra_op_num_threads = self._threads
        # An engine runs its sessions one after another: the worker threads of
        # the one that just finished would spin on the cores the next one needs.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        runners: dict[str, Runner] = {}
        for key, spec in bundle.graphs.items():
            checkpoint()
            if not spec.onnx:
                raise BundleError(
                    f"{bundle.root}: graph {key} has no ONNX file; the "
                    f"CPU backend needs bundles built with onnx/"
                )
            sess = ort.InferenceSession(
                str(bundle.path(spec.onnx)), so, providers=["CPUExecutionProvider"]
            )
            runners[key] = CpuRunner(key, sess, spec, checkpoint)
        return runners

    @property
    def status(self) -> str:
        if self.backend == "cpu":
            return "onnxruntime CPU"
        return f"QNN HTP, {self.group.status if self.group else 'no graphs'}"

    def close(self) -> None:
        if self._qnn is not None:
            self._qnn.close()
            self._qnn = None
