"""``Context`` (one context binary) and ``ContextGroup`` (several, one spill-fill)."""

from __future__ import annotations

import ctypes as C
import logging
import os
import sys
import weakref
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from . import _api as A
from .binary import BinaryInfo, mapped_file, read_binary_info
from .dsp import explained
from .errors import QnnError, check
from .graph import Graph
from .log import first_error, held_native, replay
from .rpcmem import Allocation

if TYPE_CHECKING:
    from .backend import Backend

_LOGGER = logging.getLogger(__name__)

#: Codes with which a backend refuses the multi-context group config itself (the
#: simulator answers 5010; older runtimes say "not supported").
_GROUP_REFUSED: Final = frozenset({1000, 4003, 5010})


class Context:
    """A QNN context created from a context-binary file, with its graphs."""

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
        try:
            check(rc, "contextCreateFromBinary", str(self.path))
        except QnnError as exc:  # the skel loads with the first context, too
            raise explained(lib.dsp, exc) from None
        self.handle = handle.value
        backend._adopt(self)
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
            backend._settle_memory(self)
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
        if handle is None or os.getpid() != self.backend._pid:
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

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"graphs={list(self.graphs)}"
        return f"Context({self.path.name}, {state})"


def _deregister(ref: weakref.ref[Context], mh: int) -> None:
    context = ref()
    if context is not None:
        context.deregister_memory((mh,))


def _nothing() -> None:
    """``before_each`` of a load nobody stops."""


class ContextGroup:
    """Several context binaries loaded as one REGISTER_MULTI_CONTEXTS group.

    The group's spill-fill buffer is sized once, at the first registration, so the
    maximum over *all* binaries is computed from metadata before any context
    exists.  If the backend refuses groups (the simulator: rc 5010) the binaries
    load as standalone contexts; ``shared_spill_fill`` and ``status`` say which.
    """

    def __init__(
        self,
        backend: Backend,
        paths: Sequence[str | os.PathLike[str]],
        *,
        group: bool = True,
        spill_fill_bytes: int | None = None,
        before_each: Callable[[], None] | None = None,
    ) -> None:
        """``before_each()`` runs before each binary loads and may raise to stop
        the load there (a service told to stop mid-load); loaded ones are freed."""
        if not paths:
            raise ValueError("ContextGroup needs at least one context binary")
        self.backend = backend
        self.infos = [read_binary_info(p, backend.lib) for p in paths]
        measured = max(i.spill_fill_bytes for i in self.infos)
        # Binaries from SDKs older than ~2.35 report 0: allow an explicit size.
        self.spill_fill_bytes = (
            measured if spill_fill_bytes is None else spill_fill_bytes
        )
        self.contexts: list[Context] = []
        self._before_each = before_each or _nothing
        self.shared_spill_fill = False
        self._refused = False
        try:
            if not group:
                self.status = "standalone (grouping disabled)"
            elif len(paths) < 2:
                self.status = "standalone (single binary)"
            elif self.spill_fill_bytes <= 0:
                self.status = "standalone (binaries need no spill-fill buffer)"
            else:
                self._load_grouped(paths)
            if not self.contexts:
                for p, i in zip(paths, self.infos):
                    self._before_each()
                    self.contexts.append(Context(backend, p, info=i))
        except BaseException:
            self.close()
            raise
        # Standalone contexts cost NPU memory only when a board refuses a group;
        # the simulator always refuses (qnn-abi.md §10b), so there it is routine.
        unexpected = self._refused and not backend.lib.simulator
        _LOGGER.log(
            logging.WARNING if unexpected else logging.INFO,
            "loaded %d context(s): %s",
            len(self.contexts),
            self.status,
        )

    def _load_grouped(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        size = self.spill_fill_bytes
        # QNN logs a refused group as five ERROR lines; it is an answer, not a
        # failure, so its first (the cause) goes into the one line __init__ logs.
        self._before_each()
        with held_native() as held:
            try:
                first = Context(
                    self.backend, paths[0], info=self.infos[0], group_spill_fill=size
                )
            except QnnError as exc:
                if exc.code not in _GROUP_REFUSED:
                    replay(held)
                    raise
                replay(held, below=logging.ERROR)
                said = first_error(held)
                self._refused = True
                self.status = f"standalone (group refused: {exc.name} {exc.code}"
                self.status += f"; QNN: {said})" if said else ")"
                return
        replay(held)
        self.contexts.append(first)
        for p, info in zip(paths[1:], self.infos[1:]):
            self._before_each()
            self.contexts.append(
                Context(
                    self.backend, p, info=info, group_first=first, group_spill_fill=size
                )
            )
        self.shared_spill_fill = True
        self.status = f"grouped (shared spill-fill {size} bytes)"

    @property
    def graphs(self) -> dict[str, Graph]:
        """Every graph of every context, by name."""
        out: dict[str, Graph] = {}
        for ctx in self.contexts:
            for name, g in ctx.graphs.items():
                if name in out:
                    raise ValueError(f"graph name {name!r} appears in two binaries")
                out[name] = g
        return out

    def close(self) -> None:
        """Free members before the first context (which owns the shared buffer)."""
        for ctx in reversed(self.contexts):
            ctx.close()

    def __enter__(self) -> ContextGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
