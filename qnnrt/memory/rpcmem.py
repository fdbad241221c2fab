"""DSP-visible buffers from ``libcdsprpc.so`` (rpcmem) for true zero copy on a board.

With plain (RAW) client buffers the HTP driver copies every input and output into
shared memory on each execute; for a 100 MB KV cache that is most of a decode step.
rpcmem buffers registered with ``QnnMem_register`` are read by the DSP in place.

Ownership: the :class:`RpcMem` of a ``Backend`` owns every allocation and frees
what is left in ``Backend.close``, after the contexts.  Each allocation carries the
deregistrations of the QNN handles made for it, and freeing runs them first:
deregister, then free, always.  A finalizer frees a buffer whose array is dropped
while the backend lives; it never runs at interpreter exit (``atexit=False``),
where it would run before qnnrt's exit hook, i.e. while QNN still holds the buffer.
"""

from __future__ import annotations

import ctypes as C
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np

from ..c import _api as A

_LOGGER = logging.getLogger(__name__)

#: The FastRPC userspace comes with the BSP; Debian/Ubuntu packages (qcom-fastrpc1,
#: upstream fastrpc) install only the versioned name, without the dev symlink.
RPCMEM_LIBRARIES: Final = ("libcdsprpc.so", "libcdsprpc.so.1")
#: rpcmem.h: RPCMEM_HEAP_ID_SYSTEM and RPCMEM_DEFAULT_FLAGS (cached).
RPCMEM_HEAP_ID_SYSTEM: Final = 25
RPCMEM_DEFAULT_FLAGS: Final = 1
#: rpcmem.h: rpcmem_to_fd's answer for memory it cannot map to a buffer fd.
RPCMEM_NO_FD: Final = -1
#: rpcmem_alloc takes an ``int`` size.
RPCMEM_MAX_BYTES: Final = 2**31 - 1
MEMORY_CHOICES: Final = ("auto", "rpcmem", "host")
#: Size of the buffer allocated (and registered) to decide: one page.
PROBE_BYTES: Final = 4096

MemoryKind = Literal["rpcmem", "host"]


@dataclass(frozen=True)
class MemoryChoice:
    kind: MemoryKind
    reason: str
    #: False until one buffer has been registered with a real context (the
    #: first one the backend loads): rpcmem is decided by trying.
    confirmed: bool = True


@dataclass(eq=False)
class Allocation:
    """One live rpcmem buffer and what must happen before it is freed."""

    base: int
    fd: int
    size: int
    #: Deregistrations of QNN mem handles made for this buffer.
    before_free: list[Callable[[], None]] = field(default_factory=list)


class RpcMem:
    """rpcmem allocator; arrays it returns are numpy views over DSP-mapped memory."""

    def __init__(self, lib: C.CDLL, name: str) -> None:
        self._lib = lib
        self.name = name
        lib.rpcmem_alloc.restype = C.c_void_p
        lib.rpcmem_alloc.argtypes = (C.c_int, C.c_uint32, C.c_int)
        lib.rpcmem_free.restype = None
        lib.rpcmem_free.argtypes = (C.c_void_p,)
        lib.rpcmem_to_fd.restype = C.c_int
        lib.rpcmem_to_fd.argtypes = (C.c_void_p,)
        # Older libcdsprpc builds need init/deinit around use; newer ones keep
        # them as no-ops, and some drop them.
        self._deinit = getattr(lib, "rpcmem_deinit", None)
        init = getattr(lib, "rpcmem_init", None)
        if init is not None:
            init.restype = None
            init()
        self._lock = threading.Lock()
        self._live: dict[int, Allocation] = {}
        self._closed = False

    @classmethod
    def load(cls, names: Sequence[str] = RPCMEM_LIBRARIES) -> RpcMem:
        """The first of ``names`` that loads; OSError naming each failure."""
        why = []
        for name in names:
            try:
                return cls(C.CDLL(name), name)
            except OSError as exc:
                # dlerror's "cannot open shared object file: No such file or
                # directory" for each name says only "not found".
                why.append(
                    f"{name}: not found" if "No such file" in str(exc) else str(exc)
                )
            except AttributeError as exc:  # loads, but is not libcdsprpc
                why.append(f"{name}: {exc}")
        raise OSError(f"{' / '.join(names)} does not load ({'; '.join(why)})")

    # ----------------------------------------------------------------- buffers
    def alloc(self, size: int) -> Allocation:
        if self._closed:
            raise RuntimeError("rpcmem allocator is closed")
        if not 0 < size <= RPCMEM_MAX_BYTES:
            raise ValueError(f"rpcmem allocation of {size} bytes is out of range")
        ptr = self._lib.rpcmem_alloc(RPCMEM_HEAP_ID_SYSTEM, RPCMEM_DEFAULT_FLAGS, size)
        if not ptr:
            raise MemoryError(f"rpcmem_alloc({size}) failed")
        fd = self._lib.rpcmem_to_fd(ptr)
        if fd == RPCMEM_NO_FD:
            self._lib.rpcmem_free(ptr)
            raise MemoryError(
                f"rpcmem_to_fd returned {RPCMEM_NO_FD} for a {size}-byte buffer "
                f"(no DSP-mappable fd)"
            )
        allocation = Allocation(ptr, fd, size)
        with self._lock:
            self._live[ptr] = allocation
        return allocation

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        allocation = self.alloc(size)
        raw = (C.c_uint8 * size).from_address(allocation.base)
        # The array keeps `raw` alive; dropping it frees the buffer (deregistered
        # first).  Not at exit: Backend.close frees what is left, in order.
        weakref.finalize(raw, self.release, allocation.base).atexit = False
        arr = np.frombuffer(raw, dtype=dtype).reshape(shape)
        arr[...] = 0
        return arr

    def locate(self, array: np.ndarray) -> tuple[Allocation, int] | None:
        """(allocation, offset) when ``array`` lies inside one of our buffers."""
        addr = array.ctypes.data
        with self._lock:
            for a in self._live.values():
                if a.base <= addr and addr + array.nbytes <= a.base + a.size:
                    return a, addr - a.base
        return None

    def release(self, base: int) -> None:
        """Deregister, then free one buffer (no-op when already freed)."""
        with self._lock:
            allocation = self._live.pop(base, None)
        if allocation is None:
            return
        for deregister in allocation.before_free:
            try:
                deregister()
            except Exception:  # noqa: BLE001 - the free must still happen
                _LOGGER.exception("deregistering rpcmem buffer %#x failed", base)
        allocation.before_free.clear()
        self._lib.rpcmem_free(base)

    @property
    def live(self) -> int:
        return len(self._live)

    def close(self) -> None:
        """Free every buffer left (newest first), then ``rpcmem_deinit``."""
        if self._closed:
            return
        self._closed = True
        for base in reversed(list(self._live)):
            self.release(base)
        if self._deinit is not None:
            self._deinit.restype = None
            self._deinit()


def ion_descriptor(
    allocation: Allocation, shape: Sequence[int], qnn_dtype: int
) -> tuple[A.Qnn_MemDescriptor_t, object]:
    """A ``QNN_MEM_TYPE_ION`` descriptor of ``allocation`` (and what it points at,
    to keep alive while QNN may read it)."""
    dims = (C.c_uint32 * len(shape))(*shape)
    desc = A.Qnn_MemDescriptor_t()
    desc.memShape.numDim = len(shape)
    desc.memShape.dimSize = dims
    desc.dataType = qnn_dtype
    desc.memType = A.QNN_MEM_TYPE_ION
    desc.ionFd = allocation.fd
    return desc, dims


def open_memory(prefer: str) -> tuple[RpcMem | None, MemoryChoice]:
    """The allocator and a tentative choice: load the library, allocate one buffer.

    Registration, the last step, needs a context: ``Backend`` tries it with the
    first one it loads.  ``prefer="rpcmem"`` makes a failure an error instead of
    a fallback to host memory.
    """
    if prefer not in MEMORY_CHOICES:
        raise ValueError(f"memory {prefer!r}: expected one of {MEMORY_CHOICES}")
    if prefer == "host":
        return None, MemoryChoice("host", "requested")
    try:
        rpc = RpcMem.load()
    except OSError as exc:
        if prefer == "rpcmem":
            raise
        return None, MemoryChoice("host", str(exc))
    try:
        probe = rpc.alloc(PROBE_BYTES)
    except (MemoryError, ValueError) as exc:
        rpc.close()
        if prefer == "rpcmem":
            raise
        return None, MemoryChoice("host", f"{rpc.name}: {exc}")
    rpc.release(probe.base)
    return rpc, MemoryChoice(
        "rpcmem",
        f"{rpc.name} allocates; memRegister is tried with the first context",
        confirmed=False,
    )
