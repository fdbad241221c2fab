"""``Graph``: inputs by name, outputs by index, zero-copy bound numpy buffers."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .binary import GraphInfo
from .c import _api as A
from .c.errors import check
from .memory.rpcmem import Allocation, ion_descriptor
from .memory.tensor import (
    TensorInfo,
    check_array,
    check_feeds,
    require_supported,
    tensor_structs,
    to_native,
    unbound_error,
)

if TYPE_CHECKING:
    from .backend import Backend

Key = str | int


class Owner(Protocol):
    """What a graph needs of the context it belongs to (``qnnrt.Context``)."""

    backend: Backend

    def check_usable(self) -> None: ...

    def register_memory(
        self, descriptor: A.Qnn_MemDescriptor_t, allocation: Allocation | None
    ) -> int: ...


@dataclass(frozen=True)
class Timing:
    """Seconds spent in one ``execute``: whole call vs inside ``graphExecute``."""

    wall_s: float
    execute_s: float
    accelerator_s: float | None = None

    @property
    def host_overhead_s(self) -> float:
        return self.wall_s - self.execute_s


class Graph:
    """One graph of a context.  Not created directly: see ``Context.graphs``."""

    def __init__(self, context: Owner, info: GraphInfo, handle: int) -> None:
        self.context = context
        self.info = info
        self.name = info.name
        self.handle: int | None = handle
        self.inputs: tuple[TensorInfo, ...] = info.inputs
        self.outputs: tuple[TensorInfo, ...] = info.outputs
        self.input_index = {t.name: i for i, t in enumerate(self.inputs)}
        self.output_index = {t.name: i for i, t in enumerate(self.outputs)}
        for t in self.inputs + self.outputs:
            require_supported(t, self.name)
        #: ctypes objects the tensor structs point into (names, dims, ION keeps)
        self._keep: list[Any] = []
        self._in = tensor_structs(self.inputs, A.QNN_TENSOR_TYPE_APP_WRITE, self._keep)
        self._out = tensor_structs(self.outputs, A.QNN_TENSOR_TYPE_APP_READ, self._keep)
        self._in_v1 = [t.v1 for t in self._in]
        self._out_v1 = [t.v1 for t in self._out]
        self._bound_in: list[np.ndarray | None] = [None] * len(self.inputs)
        self._bound_out: list[np.ndarray | None] = [None] * len(self.outputs)
        self._mem_handles: dict[tuple[int, int], int] = {}
        self._unbound = len(self.inputs) + len(self.outputs)
        self._fn = context.backend.lib.core("graphExecute")
        self._lock = context.backend.exec_lock
        self._profile = context.backend.profile
        self._stamps = (0.0, 0.0, 0.0, 0.0)
        self._accel_s: float | None = None

    # ----------------------------------------------------------------- binding
    def _slot(self, key: Key) -> tuple[bool, int, TensorInfo]:
        if isinstance(key, int):
            if not 0 <= key < len(self.outputs):
                raise IndexError(
                    f"graph {self.name!r} has {len(self.outputs)} outputs, "
                    f"no index {key}"
                )
            return False, key, self.outputs[key]
        if key in self.input_index:
            i = self.input_index[key]
            return True, i, self.inputs[i]
        if key in self.output_index:
            i = self.output_index[key]
            return False, i, self.outputs[i]
        raise KeyError(
            f"graph {self.name!r} has no tensor {key!r}; inputs: "
            f"{list(self.input_index)}, outputs: {list(self.output_index)}"
        )

    def bind(self, key: Key, array: np.ndarray) -> None:
        """Pin a caller-owned array as an input (by name) or output (by name/index).

        QNN reads/writes the array in place on every :meth:`execute`; the graph
        keeps a reference until it is unbound or the context closes.
        """
        self.context.check_usable()
        is_in, i, info = self._slot(key)
        what = f"graph {self.name!r} {'input' if is_in else 'output'}"
        check_array(info, array, what=what, writable=not is_in)
        bound = self._bound_in if is_in else self._bound_out
        v = (self._in_v1 if is_in else self._out_v1)[i]
        with self._lock:
            if bound[i] is None:
                self._unbound -= 1
            bound[i] = array
            self._point(v, array, info)

    def unbind(self, key: Key) -> None:
        """Forget the array bound to ``key`` (no-op when none is)."""
        is_in, i, _ = self._slot(key)
        bound = self._bound_in if is_in else self._bound_out
        v = (self._in_v1 if is_in else self._out_v1)[i]
        with self._lock:
            if bound[i] is not None:
                self._unbound += 1
                bound[i] = None
                v.memType = A.QNN_TENSORMEMTYPE_RAW
                v.clientBuf.data = None

    def bound(self, key: Key) -> np.ndarray | None:
        is_in, i, _ = self._slot(key)
        return (self._bound_in if is_in else self._bound_out)[i]

    def _point(self, v: Any, array: np.ndarray, info: TensorInfo) -> None:
        backend = self.context.backend
        rpc = backend.rpcmem if backend.memory.kind == "rpcmem" else None
        loc = rpc.locate(array) if rpc is not None else None
        if loc is None:
            v.memType = A.QNN_TENSORMEMTYPE_RAW
            v.clientBuf.data = array.ctypes.data
            v.clientBuf.dataSize = info.nbytes
            return
        # Valid while the buffer lives: freeing it deregisters the handle and
        # drops this entry (_forget_handles), so a reused address registers anew.
        key = (array.ctypes.data, array.nbytes)
        mh = self._mem_handles.get(key)
        if mh is None:
            mh = self._mem_handles[key] = self._register(info, *loc)
        v.memType = A.QNN_TENSORMEMTYPE_MEMHANDLE
        v.memHandle = mh

    def _register(self, info: TensorInfo, allocation: Allocation, offset: int) -> int:
        if offset:
            raise ValueError(
                f"graph {self.name!r} tensor {info.name!r}: rpcmem views must start "
                f"at their allocation (ION registration has no offset)"
            )
        desc, keep = ion_descriptor(allocation, info.shape, info.qnn_dtype)
        self._keep.append(keep)
        return self.context.register_memory(desc, allocation)

    def _forget_handles(self, handles: Collection[int]) -> None:
        """Drop cached mem handles that were deregistered."""
        stale = [k for k, mh in self._mem_handles.items() if mh in handles]
        for k in stale:
            del self._mem_handles[k]

    # ----------------------------------------------------------------- running
    def execute(self) -> None:
        """Run with the bound buffers only: no allocation, no copy in Python."""
        t0 = time.perf_counter()
        if self.handle is None:
            self.context.check_usable()
        if self._unbound:
            self._raise_unbound()
        with self._lock:
            self._call(t0)

    def _call(self, t0: float) -> None:
        # Caller holds the lock; the handle is re-checked under it (close races).
        if self.handle is None:
            self.context.check_usable()
        t1 = time.perf_counter()
        rc = self._fn(
            self.handle,
            self._in,
            len(self._in),
            self._out,
            len(self._out),
            self._profile,
            None,
        )
        t2 = time.perf_counter()
        if rc:
            check(rc, "graphExecute", self.name)
        if self._profile is not None:
            self._accel_s = self.context.backend.read_execute_profile()
        self._stamps = (t0, t1, t2, time.perf_counter())

    def run(
        self, inputs: Mapping[str, np.ndarray] | None = None, *, raw: bool = False
    ) -> list[np.ndarray]:
        """Execute with ``inputs`` by name (bound inputs may be omitted).

        Returns the outputs in the binary's order (see :attr:`output_index`):
        bound output arrays themselves, fresh arrays for the others.  Quantized
        inputs accept float arrays; quantized outputs come back dequantized to
        float32 unless ``raw``.
        """
        t0 = time.perf_counter()
        given = dict(inputs or {})
        bound = {t.name for t, b in zip(self.inputs, self._bound_in) if b is not None}
        check_feeds(self.name, self.inputs, given, bound)
        self.context.check_usable()
        overrides = {
            self.input_index[name]: to_native(
                self.inputs[self.input_index[name]],
                arr,
                what=f"graph {self.name!r} input",
            )
            for name, arr in given.items()
        }
        outs = [
            b if b is not None else np.empty(t.shape, t.native_dtype)
            for t, b in zip(self.outputs, self._bound_out)
        ]
        with self._lock:
            try:
                for i, arr in overrides.items():
                    self._point(self._in_v1[i], arr, self.inputs[i])
                for i, arr in enumerate(outs):
                    if self._bound_out[i] is None:
                        self._point(self._out_v1[i], arr, self.outputs[i])
                self._call(t0)
            finally:
                self._restore(overrides)
        if raw:
            return outs
        return [
            t.quantization.dequantize(a) if t.quantization is not None else a
            for t, a in zip(self.outputs, outs)
        ]

    def _restore(self, overrides: Mapping[int, np.ndarray]) -> None:
        for i in overrides:
            b = self._bound_in[i]
            if b is not None:
                self._point(self._in_v1[i], b, self.inputs[i])
            else:
                self._in_v1[i].clientBuf.data = None
        for i, b in enumerate(self._bound_out):
            if b is None:
                self._out_v1[i].clientBuf.data = None

    def _raise_unbound(self) -> None:
        ins, outs = zip(self.inputs, self._bound_in), zip(self.outputs, self._bound_out)
        raise unbound_error(self.name, ins, outs)

    @property
    def last_timing(self) -> Timing:
        """Timing of the most recent execute/run."""
        return Timing(self.last_wall_s, self.last_execute_s, self._accel_s)

    # Plain floats for per-step accounting: no object per call on the decode path.
    @property
    def last_wall_s(self) -> float:
        return self._stamps[3] - self._stamps[0]

    @property
    def last_execute_s(self) -> float:
        return self._stamps[2] - self._stamps[1]

    def _detach(self) -> None:
        # Context.close(), first step: no execute may start on this graph.
        self.handle = None

    def _drop_buffers(self) -> None:
        # Context.close(), last step: pinned arrays are dropped only once no QNN
        # handle (mem handle, context) can point at them any more.
        self._bound_in = [None] * len(self.inputs)
        self._bound_out = [None] * len(self.outputs)
        self._unbound = len(self.inputs) + len(self.outputs)
        self._mem_handles.clear()

    def __repr__(self) -> str:
        ins = ", ".join(f"{t.name}{list(t.shape)}" for t in self.inputs)
        outs = ", ".join(f"{t.name}{list(t.shape)}" for t in self.outputs)
        return f"Graph({self.name!r}, inputs=[{ins}], outputs=[{outs}])"
