"""What arrives from a Wyoming client: bounded event reading, and "gone" versus
"done sending" (streamed text is cut into sentences by ``daemon.text.sentences``).

Events are parsed by the ``wyoming`` library; ``GuardedReader`` sits between it
and the socket so a header announcing gigabytes (``data_length``,
``payload_length``) or a line without end is refused before any of it is read,
and a client that stops mid-event, or idles, is let go (``limits:`` timeouts).
"""

from __future__ import annotations

import asyncio
import select
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

#: Longest header line (StreamReader limit); headers are a few hundred bytes.
MAX_HEADER_BYTES: Final = 64 * 1024


class FramingError(Exception):
    """The byte stream is not valid Wyoming; the connection must close."""


class Idle(Exception):
    """No event began within the idle timeout while nothing was in flight."""


@dataclass(frozen=True)
class Timeouts:
    """``limits:`` idle_timeout_s, header_timeout_s, body_timeout_s."""

    idle: float
    header: float
    body: float


class GuardedReader:
    """Bounds what ``async_read_event`` may read, and how long it may wait.

    Waiting for an event is idle only while ``busy()`` is false: a client
    waiting for its audio sends nothing and is not idle.  Once an event's first
    byte is in, its header and then its data/payload have their own timeouts.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        max_bytes: int,
        timeouts: Timeouts,
        busy: Callable[[], bool],
    ) -> None:
        self._reader, self._max = reader, max_bytes
        self._timeouts, self._busy = timeouts, busy
        self.line = b""
        self.waiting = False  # for the next event, with nothing of it read

    async def readline(self) -> bytes:
        self.line = first = await self._first_byte()
        if first in (b"", b"\n"):
            return first
        try:
            async with asyncio.timeout(self._timeouts.header):
                self.line = first + await self._reader.readline()
        except ValueError:  # LimitOverrunError: no newline within the limit
            raise FramingError(
                f"event header longer than {MAX_HEADER_BYTES} bytes"
            ) from None
        except TimeoutError:
            raise FramingError(
                f"event header not complete within {self._timeouts.header:g} s"
            ) from None
        return self.line

    async def _first_byte(self) -> bytes:
        self.waiting = True
        try:
            while True:
                try:
                    async with asyncio.timeout(self._timeouts.idle):
                        return await self._reader.read(1)  # b"" at end of input
                except TimeoutError:
                    if not self._busy():
                        raise Idle(f"idle for {self._timeouts.idle:g} s") from None
        finally:
            self.waiting = False

    async def readexactly(self, n: Any) -> bytes:
        if not isinstance(n, int) or isinstance(n, bool):
            raise FramingError(f"data_length/payload_length {n!r} is not an integer")
        if n > self._max:
            raise FramingError(
                f"data_length/payload_length {n} exceeds the limit of {self._max} bytes"
            )
        try:
            async with asyncio.timeout(self._timeouts.body):
                return await self._reader.readexactly(n)
        except TimeoutError:
            raise FramingError(
                f"event data/payload ({n} bytes) not received within "
                f"{self._timeouts.body:g} s"
            ) from None


def peer_closed(writer: asyncio.StreamWriter) -> bool:
    """True when the peer closed its socket, not merely its writing side.

    On a Unix stream socket a full close by the peer raises POLLHUP while a
    ``shutdown(SHUT_WR)`` only ends our input; TCP cannot tell the two apart
    until a write fails, so there end of input counts as gone (as in the
    reference ``wyoming`` server).
    """
    if writer.transport.is_closing():  # a write already found the peer gone
        return True
    sock = writer.get_extra_info("socket")
    if sock is None or sock.family != socket.AF_UNIX or sock.fileno() < 0:
        return True
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLHUP)
    return any(mask & select.POLLHUP for _, mask in poller.poll(0))
