"""What arrives from a Wyoming client: bounded event reading, "gone" versus
"done sending", and streamed text cut into sentences.

Events are parsed by the ``wyoming`` library; ``GuardedReader`` sits between it
and the socket so a header announcing gigabytes (``data_length``,
``payload_length``) or a line without end is refused before any of it is read.
"""

from __future__ import annotations

import asyncio
import re
import select
import socket
from typing import Any, Final

#: Longest header line (StreamReader limit); headers are a few hundred bytes.
MAX_HEADER_BYTES: Final = 64 * 1024
#: Streaming text is cut after an end mark + closing quotes/brackets + whitespace
#: (the marks of daemon.text.split, not imported: it loads the whole Chinese
#: frontend).  wyoming-bench and Home Assistant send sentences with a trailing
#: space (ecosystem.md §1.3).
END_MARKS: Final = ".!?。！？…"
CLOSERS: Final = "”」』’）)\"'"
_SENTENCE_END = re.compile(rf"[{re.escape(END_MARKS)}]+[{re.escape(CLOSERS)}]*\s+")


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


def ready_text(buffer: str, final: bool, limit: int) -> tuple[list[str], str]:
    """Split off the complete sentences of streamed text: (pieces, rest).

    Pieces are at most ``limit`` characters; without a sentence end in sight a
    buffer over ``limit`` is let go anyway rather than held forever.
    """
    ends = list(_SENTENCE_END.finditer(buffer))
    cut = len(buffer) if final else (ends[-1].end() if ends else 0)
    if not cut and len(buffer) > limit:
        cut = len(buffer)
    done, rest = buffer[:cut], buffer[cut:]
    pieces = [done[i : i + limit] for i in range(0, len(done), limit)]
    return [p for p in pieces if p.strip()], rest


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
