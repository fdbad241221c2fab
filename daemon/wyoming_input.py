"""What arrives from a Wyoming client: bounded event reading, and "gone" versus
"done sending" (streamed text is cut into sentences by ``daemon.sentences``).

Events are parsed by the ``wyoming`` library; ``GuardedReader`` sits between it
and the socket so a header announcing gigabytes (``data_length``,
``payload_length``) or a line without end is refused before any of it is read.
"""

from __future__ import annotations

import asyncio
import select
import socket
from typing import Any, Final

#: Longest header line (StreamReader limit); headers are a few hundred bytes.
MAX_HEADER_BYTES: Final = 64 * 1024


class FramingError(Exception):
    """The byte stream is not valid Wyoming; the connection must close."""


class GuardedReader:
    """Bounds what ``async_read_event`` may read and remembers the last header."""

    def __init__(self, reader: asyncio.StreamReader, max_bytes: int) -> None:
        self._reader, self._max = reader, max_bytes
        self.line = b""

    async def readline(self) -> bytes:
        try:
            self.line = await self._reader.readline()
        except ValueError:  # LimitOverrunError: no newline within the limit
            raise FramingError(
                f"event header longer than {MAX_HEADER_BYTES} bytes"
            ) from None
        return self.line

    async def readexactly(self, n: Any) -> bytes:
        if not isinstance(n, int) or isinstance(n, bool):
            raise FramingError(f"data_length/payload_length {n!r} is not an integer")
        if n > self._max:
            raise FramingError(
                f"data_length/payload_length {n} exceeds the limit of {self._max} bytes"
            )
        return await self._reader.readexactly(n)


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
