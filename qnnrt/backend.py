"""``Backend``: the QNN log + backend + device (+ power vote) that contexts live in."""

from __future__ import annotations

import ctypes as C
import logging
import os
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from .c import _api as A
from .c import _lifecycle
from .c._lib import QnnLibrary, load_library
from .c._lifecycle import Closing
from .c.dsp import explained
from .c.errors import QnnError, check
from .c.log import Logger, first_error, held_native, replay
from .memory.rpcmem import (
    PROBE_BYTES,
    Allocation,
    MemoryChoice,
    RpcMem,
    ion_descriptor,
    open_memory,
)
from .power import PowerConfig, open_power

_LOGGER = logging.getLogger(__name__)

#: ``Context.register_memory``: memRegister one buffer, return its mem handle.
Register = Callable[[A.Qnn_MemDescriptor_t, Allocation | None], int]


class Owned(Protocol):
    """What a backend closes before its own handles: a context."""

    @property
    def closed(self) -> bool: ...

    def close(self) -> None: ...


class Backend(Closing):
    """Owns the QNN log, backend and device handles and every context made from it.

    Teardown order is structural: contexts (reverse creation order; each
    deregisters its mem handles first) → rpcmem buffers → power config → device →
    backend → log.  ``close()`` is idempotent; an atexit hook closes a
    backend left open, after joining NPU workers.
    """

    def __init__(
        self,
        lib: QnnLibrary | None = None,
        *,
        lib_dir: str | os.PathLike[str] | None = None,
        log_level: str | int | None = None,
        soc_model: int | None = None,
        power: str | None = None,
        memory: str = "auto",
        profiling: bool = False,
    ) -> None:
        self.lib = lib or load_library(lib_dir)
        self._pid = os.getpid()
        self._contexts: list[weakref.ref[Owned]] = []
        self._closed = False
        #: One NPU call at a time per backend: grouped contexts share spill-fill
        #: memory, and exit must be able to wait for the call in flight.
        self.exec_lock = threading.Lock()
        self.logger: Logger | None = None
        self.handle: int | None = None
        self.device: int | None = None
        self.power: PowerConfig | None = None
        self.profile: int | None = None
        self.rpcmem: RpcMem | None = None
        try:
            self.lib.prepare_dsp()
            self.logger = Logger(self.lib, log_level)
            handle = A.Qnn_Handle_t()
            check(
                self.lib.core("backendCreate")(
                    self.logger.handle, None, C.byref(handle)
                ),
                "backendCreate",
            )
            self.handle = handle.value
            self.device = self._create_device(soc_model)
            self.power = open_power(self.lib, power)
            if profiling:
                prof = A.Qnn_Handle_t()
                check(
                    self.lib.core("profileCreate")(
                        self.handle, A.QNN_PROFILE_LEVEL_BASIC, C.byref(prof)
                    ),
                    "profileCreate",
                )
                self.profile = prof.value
            # Decided by trying (as onnxruntime and ExecuTorch do), not by
            # propertyHasCapability: the simulator answers 1000 for MEMHANDLE
            # tensors, and a board's answer is not what memRegister does.
            self._memory_request = memory
            self.rpcmem, self.memory = open_memory(memory)
            if self.memory.confirmed:
                _LOGGER.info("QNN memory: host (%s)", self.memory.reason)
        except QnnError as exc:
            self.close()
            raise explained(self.lib.dsp, exc) from None
        except BaseException:
            self.close()
            raise
        _lifecycle.track_backend(self, self.exec_lock)

    def _create_device(self, soc_model: int | None) -> int | None:
        if not self.lib.has_capability(A.QNN_PROPERTY_GROUP_DEVICE):
            return None
        cfgs = None
        if soc_model is not None:
            custom = A.QnnHtpDevice_CustomConfig_t()
            custom.option = A.QNN_HTP_DEVICE_CONFIG_OPTION_SOC
            # Written at +4 (2.43 layout) and +8 (2.51 layout): docs/qnn.md, struct
            # layouts.
            custom.socModel_v243 = custom.socModel = soc_model
            cfg = A.QnnDevice_Config_t(
                A.QNN_DEVICE_CONFIG_OPTION_CUSTOM, C.addressof(custom)
            )
            cfgs = (C.POINTER(A.QnnDevice_Config_t) * 2)(C.pointer(cfg))
            self._device_cfg_keep = (custom, cfg, cfgs)
        device = A.Qnn_Handle_t()
        check(
            self.lib.core("deviceCreate")(
                self.logger.handle if self.logger else None, cfgs, C.byref(device)
            ),
            "deviceCreate",
            f"soc_model={soc_model}" if soc_model is not None else "",
        )
        return device.value

    # ----------------------------------------------------------------- contexts
    def own(self, context: Owned) -> None:
        """Close ``context`` in :meth:`close`, before anything of the backend's own.

        Every context calls this once it exists (``Context.open``); the backend
        holds it weakly and closes its contexts newest first.
        """
        self.check_usable()
        self._contexts.append(weakref.ref(context))

    @property
    def contexts(self) -> list[Owned]:
        """The owned contexts still alive (closed ones included), oldest first."""
        alive = (ref() for ref in self._contexts)
        return [c for c in alive if c is not None]

    # ----------------------------------------------------------------- memory
    def empty(self, shape: Sequence[int], dtype: Any) -> np.ndarray:
        """A zeroed array QNN can read without copies (rpcmem on a board).

        rpcmem arrays are valid until :meth:`close`, which frees their memory.
        """
        self.check_usable()
        if self.rpcmem is not None and self.memory.kind == "rpcmem":
            return self.rpcmem.zeros(tuple(shape), np.dtype(dtype))
        return np.zeros(tuple(shape), dtype)

    def settle_memory(self, register: Register) -> None:
        """Decide rpcmem with the first context: ``register`` (that context's
        ``register_memory``) one probe buffer; a refusal means host memory."""
        if self.memory.confirmed or self.rpcmem is None:
            return
        rpc = self.rpcmem
        probe = rpc.alloc(PROBE_BYTES)
        desc, _keep = ion_descriptor(probe, (PROBE_BYTES,), A.QNN_DATATYPE_UINT_8)
        failed: QnnError | None = None
        with held_native() as held:  # a refusal is an answer: one line, below
            try:
                register(desc, probe)
            except QnnError as exc:
                failed = exc
        rpc.release(probe.base)  # deregisters the probe's handle, then frees
        if failed is None:
            replay(held)
            self.memory = MemoryChoice(
                "rpcmem", f"{rpc.name}; ION buffers register with QNN"
            )
            _LOGGER.info("QNN memory: rpcmem (%s)", self.memory.reason)
            return
        if self._memory_request == "rpcmem":
            replay(held)
            raise failed
        replay(held, below=logging.ERROR)
        said = first_error(held)
        self.memory = MemoryChoice(
            "host",
            f"memRegister of a {PROBE_BYTES}-byte {rpc.name} buffer failed: "
            f"{failed.name} ({failed.code})" + (f"; QNN: {said}" if said else ""),
        )
        # rpcmem buffers handed out before this stay valid (as RAW buffers) and
        # are freed at close.
        level = logging.INFO if self.lib.simulator else logging.WARNING
        _LOGGER.log(level, "QNN memory: host (%s)", self.memory.reason)

    def read_execute_profile(self) -> float | None:
        """Accelerator seconds of the last execute, from the BASIC profile."""
        if self.profile is None:
            return None
        ids = C.POINTER(C.c_uint64)()
        n = C.c_uint32()
        check(
            self.lib.core("profileGetEvents")(self.profile, C.byref(ids), C.byref(n)),
            "profileGetEvents",
        )
        found = None
        data = A.QnnProfile_EventData_t()
        for i in range(n.value):
            check(
                self.lib.core("profileGetEventData")(ids[i], C.byref(data)),
                "profileGetEventData",
            )
            if (
                data.type
                == A.QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC
                and data.unit == A.QNN_PROFILE_EVENTUNIT_MICROSEC
            ):
                found = data.value * 1e-6  # events accumulate: keep the newest
        return found

    # ----------------------------------------------------------------- state
    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def forked(self) -> bool:
        """True in a forked child: the handles belong to the parent's process."""
        return os.getpid() != self._pid

    def check_usable(self) -> None:
        if self._closed:
            raise RuntimeError("QNN backend is closed")
        if self.forked:
            raise RuntimeError(
                "QNN objects cannot be used in a forked child; create a new Backend"
            )

    def close(self) -> None:
        """Free contexts (newest first), rpcmem, power vote, device, backend, log."""
        if self._closed:
            return
        self._closed = True
        if self.forked:
            # Forked child: the handles belong to the parent's FastRPC session.
            return
        for ref in reversed(self._contexts):
            ctx = ref()
            if ctx is not None:
                ctx.close()
        self._contexts.clear()
        steps = (
            # After the contexts (they deregistered every handle), before the
            # device and backend: the buffers' last user is gone.
            ("rpcmem", lambda: self.rpcmem and self.rpcmem.close()),
            ("power", lambda: self.power and self.power.close()),
            ("profile", lambda: self._free("profileFree", "profile")),
            ("device", lambda: self._free("deviceFree", "device")),
            ("backend", lambda: self._free("backendFree", "handle")),
            ("log", lambda: self.logger and self.logger.close()),
        )
        for name, step in steps:
            try:
                step()
            except Exception:  # noqa: BLE001 - keep freeing the rest; say what failed
                _LOGGER.exception("freeing QNN %s failed", name)

    def _free(self, fn: str, attr: str) -> None:
        handle = getattr(self, attr)
        setattr(self, attr, None)
        if handle is not None:
            check(self.lib.core(fn)(handle), fn)

    def __del__(self) -> None:
        # Backstop only (the atexit hook and close() are the real paths).
        if not getattr(self, "_closed", True) and not sys.is_finalizing():
            _LOGGER.warning("QNN backend was not closed; closing it")
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._contexts)} contexts"
        return f"Backend({self.lib.build_id}, {state})"
