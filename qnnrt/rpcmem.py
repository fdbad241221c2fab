"""DSP-visible buffers from ``libcdsprpc.so`` (rpcmem) for true zero copy on a board.

With plain (RAW) client buffers the HTP driver copies every input and output into
shared memory on each execute; for a 100 MB KV cache that is most of a decode step.
rpcmem buffers registered with ``QnnMem_register`` are read by the DSP in place.
On x86 (simulator) there is no libcdsprpc, and qnnrt uses plain numpy memory.
"""

from __future__ import annotations

import ctypes as C
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

_LOGGER = logging.getLogger(__name__)

RPCMEM_LIBRARY: Final = "libcdsprpc.so"
#: rpcmem.h: RPCMEM_HEAP_ID_SYSTEM and RPCMEM_DEFAULT_FLAGS (cached).
RPCMEM_HEAP_ID_SYSTEM: Final = 25
RPCMEM_DEFAULT_FLAGS: Final = 1
MEMORY_CHOICES: Final = ("auto", "rpcmem", "host")

MemoryKind = Literal["rpcmem", "host"]


@dataclass(frozen=True)
class MemoryChoice:
    kind: MemoryKind
    reason: str


def choose_memory(
    prefer: str,
    *,
    rpcmem_loads: Callable[[], bool] | bool,
    ion_supported: bool,
    memhandle_tensors: bool,
) -> MemoryChoice:
    """Pick rpcmem when the board can use it, plain host memory otherwise.

    ``prefer="rpcmem"`` makes a missing piece an error instead of a fallback.
    """
    if prefer not in MEMORY_CHOICES:
        raise ValueError(f"memory {prefer!r}: expected one of {MEMORY_CHOICES}")
    if prefer == "host":
        return MemoryChoice("host", "requested")
    missing = []
    loads = rpcmem_loads() if callable(rpcmem_loads) else rpcmem_loads
    if not loads:
        missing.append(f"{RPCMEM_LIBRARY} does not load")
    if not ion_supported:
        missing.append("backend lacks QNN_PROPERTY_MEM_TYPE_ION")
    if not memhandle_tensors:
        missing.append("backend lacks MEMHANDLE tensors")
    if not missing:
        return MemoryChoice("rpcmem", f"{RPCMEM_LIBRARY} + ION mem handles")
    if prefer == "rpcmem":
        raise RuntimeError("rpcmem memory requested but " + "; ".join(missing))
    return MemoryChoice("host", "; ".join(missing))


class RpcMem:
    """rpcmem allocator; arrays it returns are numpy views over DSP-mapped memory."""

    _probe_lock = threading.Lock()
    _probe: bool | None = None

    def __init__(self, lib: C.CDLL) -> None:
        self._lib = lib
        lib.rpcmem_alloc.restype = C.c_void_p
        lib.rpcmem_alloc.argtypes = (C.c_int, C.c_uint32, C.c_int)
        lib.rpcmem_free.restype = None
        lib.rpcmem_free.argtypes = (C.c_void_p,)
        lib.rpcmem_to_fd.restype = C.c_int
        lib.rpcmem_to_fd.argtypes = (C.c_void_p,)
        #: base address → (fd, size) of every live allocation
        self._live: dict[int, tuple[int, int]] = {}

    @classmethod
    def load(cls) -> RpcMem:
        return cls(C.CDLL(RPCMEM_LIBRARY))

    @classmethod
    def available(cls) -> bool:
        """Whether libcdsprpc loads here (probed once)."""
        with cls._probe_lock:
            if cls._probe is None:
                try:
                    C.CDLL(RPCMEM_LIBRARY)
                    cls._probe = True
                except OSError:
                    cls._probe = False
            return cls._probe

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if size <= 0 or size >= 2**31:
            raise ValueError(f"rpcmem allocation of {size} bytes is out of range")
        ptr = self._lib.rpcmem_alloc(RPCMEM_HEAP_ID_SYSTEM, RPCMEM_DEFAULT_FLAGS, size)
        if not ptr:
            raise MemoryError(f"rpcmem_alloc({size}) failed")
        fd = self._lib.rpcmem_to_fd(ptr)
        raw = (C.c_uint8 * size).from_address(ptr)
        self._live[ptr] = (fd, size)
        # The numpy array keeps `raw` alive; freeing follows the array's lifetime.
        weakref.finalize(raw, self._free, ptr)
        arr = np.frombuffer(raw, dtype=dtype).reshape(shape)
        arr[...] = 0
        return arr

    def _free(self, ptr: int) -> None:
        if self._live.pop(ptr, None) is not None:
            self._lib.rpcmem_free(ptr)

    def fd_of(self, array: np.ndarray) -> tuple[int, int] | None:
        """(fd, offset) when ``array`` lies inside one of our allocations."""
        addr = array.ctypes.data
        for base, (fd, size) in self._live.items():
            if base <= addr and addr + array.nbytes <= base + size:
                return fd, addr - base
        return None
