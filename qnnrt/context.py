"""``Context``: one context binary loaded on a backend, with its graphs.

Several binaries sharing one spill-fill buffer: ``ContextGroup`` (group.py).
"""

from __future__ import annotations

import ctypes as C
import logging
import os
import sys
import weakref
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .binary import BinaryInfo, mapped_file, read_binary_info
from .c import _api as A
from .c._lifecycle import Closing
from .c.dsp import explained
from .c.errors import QnnError, check
from .graph import Graph
from .memory.rpcmem import Allocation

if TYPE_CHECKING:
    from .backend import Backend

_LOGGER = logging.getLogger(__name__)
#: why a weight-shared binary may not load: the x86 HTP simulator (QNN 2.51)
#: refuses any binary with a shared-weights section under every load config
#: tried (measured: tests/qnnrt/test_shared.py); a board target's build makes
#: them, a simulator build not
SHARED_WEIGHTS_NEED = "loads on a board, not on the x86 simulator"


class Context(Closing):
    """A QNN context created from a context-binary file, with its graphs.

    Made by :meth:`open` (or, several sharing spill-fill, ``ContextGroup``); the
    backend owns it from then on and closes it before its own handles.
    """

    @classmethod
    def open(
        cls,
        backend: Backend,
        path: str | os.PathLike[str],
        *,
        info: BinaryInfo | None = None,
    ) -> Context:
        """Create a context from one binary file (``info``: its metadata, if read)."""
        return cls(backend, path, info=info)

    def __init__(
        self,
        backend: Backend,
        path: str | os.PathLike[str],
        *,
        info: BinaryInfo | None = None,
        group_first: Context | None = None,
        group_spill_fill: int | None = None,
    ) -> None:
        backend.check_usable()
        self.backend = backend
        self.path = Path(path)
        self.handle: int | None = None
        #: memRegister handle → the rpcmem buffer it maps (None: not ours)
        self._mem_handles: dict[int, Allocation | None] = {}
        self.info = info or read_binary_info(self.path, backend.lib)
        lib = backend.lib
        keep: list[Any] = []
        cfgs = None
        if group_spill_fill is not None:
            custom = A.QnnHtpContext_CustomConfig_t()
            custom.option = A.QNN_HTP_CONTEXT_CONFIG_OPTION_REGISTER_MULTI_CONTEXTS
            reg = custom.groupRegistration
            # The first context owns the shared buffer; members name it.
            reg.firstGroupHandle = group_first.handle if group_first else None
            reg.maxSpillFillBuffer = group_spill_fill
            cfg = A.QnnContext_Config_t()
            cfg.option = A.QNN_CONTEXT_CONFIG_OPTION_CUSTOM
            cfg.customConfig = C.addressof(custom)
            cfgs = (C.POINTER(A.QnnContext_Config_t) * 2)(C.pointer(cfg))
            keep += [custom, cfg]
        handle = A.Qnn_Handle_t()
        with mapped_file(self.path) as (addr, size):
            rc = lib.core("contextCreateFromBinary")(
                backend.handle, backend.device, cfgs, addr, size, C.byref(handle), None
            )
        # A failed create may still write a handle that cannot be freed: ignore it.
        detail = str(self.path)
        if self.info.shares_weights:  # the x86 simulator's 1000 (NOT_SUPPORTED)
            detail += f" (its graphs share weights: {SHARED_WEIGHTS_NEED})"
        try:
            check(rc, "contextCreateFromBinary", detail)
        except QnnError as exc:  # the skel loads with the first context, too
            raise explained(lib.dsp, exc) from None
        self.handle = handle.value
        backend.own(self)
        try:
            self.graphs: dict[str, Graph] = {}
            for g in self.info.graphs:
                gh = A.Qnn_Handle_t()
                check(
                    lib.core("graphRetrieve")(
                        self.handle, g.name.encode(), C.byref(gh)
                    ),
                    "graphRetrieve",
                    g.name,
                )
                self.graphs[g.name] = Graph(self, g, gh.value)
            backend.settle_memory(self.register_memory)
        except BaseException:
            self.close()
            raise

    def graph(self, name: str | None = None) -> Graph:
        """The graph called ``name``; without a name, the binary's only graph."""
        if name is None:
            if len(self.graphs) != 1:
                raise ValueError(
                    f"{self.path.name} holds {len(self.graphs)} graphs; name one of "
                    f"{sorted(self.graphs)}"
                )
            return next(iter(self.graphs.values()))
        try:
            return self.graphs[name]
        except KeyError:
            raise KeyError(
                f"{self.path.name} has no graph {name!r}; graphs: {sorted(self.graphs)}"
            ) from None

    def register_memory(
        self, descriptor: A.Qnn_MemDescriptor_t, allocation: Allocation | None = None
    ) -> int:
        """``memRegister`` one buffer with this context.

        The handle is deregistered when ``allocation`` is freed or the context
        closes, whichever comes first; never after the memory is gone.
        """
        self.check_usable()
        mh = A.Qnn_Handle_t()
        check(
            self.backend.lib.core("memRegister")(
                self.handle, C.byref(descriptor), 1, C.byref(mh)
            ),
            "memRegister",
        )
        self._adopt_mem_handle(mh.value, allocation)
        return mh.value

    def _adopt_mem_handle(self, mh: int, allocation: Allocation | None) -> None:
        self._mem_handles[mh] = allocation
        if allocation is not None:
            ref = weakref.ref(self)  # the buffer must not keep the context alive
            allocation.before_free.append(lambda: _deregister(ref, mh))

    def deregister_memory(self, handles: Collection[int]) -> None:
        """``memDeRegister`` those of ``handles`` still registered here."""
        mine = [h for h in handles if h in self._mem_handles]
        if not mine:
            return
        for h in mine:
            del self._mem_handles[h]
        for g in getattr(self, "graphs", {}).values():
            g._forget_handles(mine)
        arr = (A.Qnn_Handle_t * len(mine))(*mine)
        _LOGGER.debug("memDeRegister %d handle(s) of %s", len(mine), self.path.name)
        try:
            check(
                self.backend.lib.core("memDeRegister")(arr, len(arr)), "memDeRegister"
            )
        except QnnError:
            _LOGGER.exception("memDeRegister for %s failed", self.path.name)

    @property
    def closed(self) -> bool:
        return self.handle is None

    def check_usable(self) -> None:
        if self.handle is None:
            raise RuntimeError(f"context {self.path.name} is closed")
        self.backend.check_usable()

    def close(self) -> None:
        """Deregister memory and free the context; graphs become unusable."""
        handle, self.handle = self.handle, None
        if handle is None or self.backend.forked:
            return
        graphs = list(getattr(self, "graphs", {}).values())
        for g in graphs:
            g._detach()
        # Order: mem handles, then the context, then the arrays they point at.
        self.deregister_memory(list(self._mem_handles))
        try:
            if self.backend.handle is not None:  # else the backend already freed it
                check(
                    self.backend.lib.core("contextFree")(handle, None),
                    "contextFree",
                    self.path.name,
                )
        finally:
            for g in graphs:
                g._drop_buffers()

    def __del__(self) -> None:
        # Backstop only: normal teardown is close() or Backend.close().
        if getattr(self, "handle", None) is not None and not sys.is_finalizing():
            _LOGGER.warning("context %s was not closed; closing it", self.path.name)
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"graphs={list(self.graphs)}"
        return f"Context({self.path.name}, {state})"


def _deregister(ref: weakref.ref[Context], mh: int) -> None:
    context = ref()
    if context is not None:
        context.deregister_memory((mh,))
