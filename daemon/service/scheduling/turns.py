"""Turns on the engines, first come first served (event loop only).

An ASR session keeps state bound to its engine's graphs (a KV cache, filled
buffers) from ``open`` to ``close``, while other requests run on the NPU worker
between its steps.  So one session per engine holds that engine's turn; a
second session of the same engine waits for it, in arrival order.  A load,
reload or eviction takes every turn (``ALL``): it waits for the open sessions
to end, and sessions asked for after it wait until it is done, so no engine is
closed under a session.

Granting is FIFO without blocking strangers: a waiter is granted as soon as its
key is free and no earlier waiter wants the same key (or everything), so a
session of engine B never waits behind one queued for engine A.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

#: The key of a turn on every engine at once (loads and evictions).
ALL: Final = ("every engine",)


@dataclass(eq=False)
class Turn:
    """One request for ``key``'s turn; ``granted`` resolves when it is ours."""

    key: Hashable
    granted: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Turns:
    """Who holds which engine's turn, and who waits for one, in order."""

    def __init__(self) -> None:
        self._held: dict[Hashable, Turn] = {}  # key -> its holder
        self._waiting: list[Turn] = []

    def ask(self, key: Hashable) -> Turn:
        """Queue for ``key``'s turn (granted at once when it is free)."""
        turn = Turn(key)
        self._waiting.append(turn)
        self._grant()
        return turn

    def done(self, turn: Turn) -> None:
        """Give a held turn back, or stop waiting for it (idempotent)."""
        if turn in self._waiting:
            self._waiting.remove(turn)
        elif self._held.get(turn.key) is turn:
            del self._held[turn.key]
        self._grant()

    @asynccontextmanager
    async def every(self) -> AsyncIterator[None]:
        """Hold every engine's turn for the block (after the open sessions)."""
        turn = self.ask(ALL)
        try:
            await turn.granted
            yield
        finally:
            self.done(turn)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def _grant(self) -> None:
        ahead: set[Hashable] = set()  # keys wanted by earlier waiters
        for turn in list(self._waiting):
            if turn.granted.cancelled():  # its waiter left without done()
                self._waiting.remove(turn)
                continue
            if _clash(turn.key, self._held) or _clash(turn.key, ahead):
                ahead.add(turn.key)
                continue
            self._waiting.remove(turn)
            self._held[turn.key] = turn
            if not turn.granted.done():
                turn.granted.set_result(None)


def _clash(key: Hashable, keys: Collection[Hashable]) -> bool:
    if key == ALL:
        return bool(keys)
    return key in keys or ALL in keys
