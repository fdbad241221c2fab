"""``ContextGroup``: several context binaries sharing one spill-fill buffer."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from .binary import read_binary_info
from .c._lifecycle import Closing
from .c.errors import QnnError
from .c.log import first_error, held_native, replay
from .context import Context
from .graph import Graph

if TYPE_CHECKING:
    from .backend import Backend

_LOGGER = logging.getLogger(__name__)
#: The x86 HTP simulator refuses every multi-context group (measured: QNN
#: 2.51 answers QNN_CONTEXT_ERROR_INVALID_CONFIG 5010, "HTP Config option: 2 not
#: supported"); a board shares one spill-fill buffer.
SIMULATOR_REFUSES: Final = "the HTP simulator has no shared spill-fill groups"

#: Codes with which a backend refuses the multi-context group config itself (the
#: simulator answers 5010; older runtimes say "not supported").
_GROUP_REFUSED: Final = frozenset({1000, 4003, 5010})


def _nothing() -> None:
    """``before_each`` of a load nobody stops."""


class ContextGroup(Closing):
    """Several context binaries loaded as one REGISTER_MULTI_CONTEXTS group.

    The group's spill-fill buffer is sized once, at the first registration, so the
    maximum over *all* binaries is computed from metadata before any context
    exists.  If the backend refuses groups (the simulator: rc 5010) the binaries
    load as standalone contexts; ``shared_spill_fill`` and ``status`` say which.
    """

    @classmethod
    def open(
        cls,
        backend: Backend,
        paths: Sequence[str | os.PathLike[str]],
        *,
        group: bool = True,
        spill_fill_bytes: int | None = None,
        before_each: Callable[[], None] | None = None,
    ) -> ContextGroup:
        """Load ``paths`` as one group if the backend allows it (see ``__init__``)."""
        return cls(
            backend,
            paths,
            group=group,
            spill_fill_bytes=spill_fill_bytes,
            before_each=before_each,
        )

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
                    self.contexts.append(Context.open(backend, p, info=i))
        except BaseException:
            self.close()
            raise
        # Standalone contexts cost NPU memory only when a board refuses a group;
        # the simulator always refuses (docs/qnn.md, context groups), so there it is
        # routine.
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
                cause = f"{exc.name} {exc.code}" + (f"; QNN: {said}" if said else "")
                if self.backend.lib.simulator:
                    # Routine there, so the QNN code (which reads as a failure)
                    # goes to the debug log and the status says what happened.
                    _LOGGER.debug("group refused: %s", cause)
                    self.status = f"standalone ({SIMULATOR_REFUSES})"
                else:
                    self.status = f"standalone (group refused: {cause})"
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
