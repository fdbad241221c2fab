"""Accepting connections: one accept loop per listening socket, one cap for all.

Both protocols come through here, so ``max_connections`` bounds the service's
descriptors whatever mix of clients arrives.  At the cap a new connection first
takes the place of the longest-open *idle* one (no request in flight: an HTTP
keep-alive connection between requests, a Wyoming client with nothing queued),
the way nginx reclaims idle keep-alive connections; only when every connection
is busy is the newcomer refused, with a short protocol-level answer (HTTP 503,
a Wyoming ``error`` event) and a close.  Evictions and refusals are logged
through the one limiter of client-caused lines (``clientlog.CLIENT_LOG``): one
line per kind per window, with how many more there were.

We accept ourselves instead of using ``loop.create_server`` because Python
3.11's accept loop, on EMFILE, logs a traceback for every retry of every queued
connection and re-arms itself once per failure (38,579 tracebacks in 20 s with
300 waiting clients).  Here running out of descriptors is one
rate-limited warning and a pause of ``ACCEPT_RETRY_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import resource
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from daemon.service.edge.clientlog import CLIENT_LOG

_LOGGER = logging.getLogger(__name__)
#: asyncio.constants.ACCEPT_RETRY_DELAY: wait before accepting again after EMFILE.
ACCEPT_RETRY_S: Final = 1.0
#: Descriptors kept free besides one per connection and what is open at start:
#: log files, /proc reads, a reload's manifests, refused sockets lingering.  A
#: reload may also hold a second voice set (model files, QNN contexts, rpcmem
#: buffers), so what start-up left open is reserved once more (``fd_room``).
FD_MARGIN: Final = 32
#: What is logged (each its own kind for the limiter).
_EVICTED: Final = "an idle connection closed for a newcomer"
_REFUSED: Final = "a newcomer refused (all busy)"
_EMFILE: Final = "an accept failed (out of descriptors)"
_OUT_OF_RESOURCES: Final = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
#: A refused client may not have written its request yet: were the socket
#: closed at once, that write would fail (EPIPE) before the client reads our
#: answer.  So the answer goes out with our side half-closed, and the socket is
#: closed this much later; at most REFUSALS_LINGERING at a time (descriptors).
REFUSAL_LINGER_S: Final = 1.0
REFUSALS_LINGERING: Final = 16
#: What a refused client sent is read and dropped before the close: closing a
#: TCP socket with unread input sends RST, which can destroy our answer in the
#: client's buffers.
_DRAIN_BYTES: Final = 64 * 1024


@dataclass(frozen=True)
class Tracked:
    """An admitted connection as the cap sees it."""

    transport: asyncio.BaseTransport
    idle: Callable[[], bool]
    """True when nothing is in flight, so the connection may be reclaimed."""
    close: Callable[[], None]
    """End it gracefully (whatever is being written is finished first)."""


#: Takes an accepted socket, starts serving it, and says how to watch it.
Start = Callable[[socket.socket], Awaitable[Tracked]]


@dataclass(frozen=True)
class Acceptor:
    """The accept loop of one listening socket."""

    task: asyncio.Task[None]
    admission: Admission

    async def stop(self) -> None:
        """Stop accepting; admitted connections are left to their server."""
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        self.admission.flush()


def fd_room(soft_limit: int, in_use: int) -> int:
    """Connections that fit under the descriptor limit (see ``FD_MARGIN``)."""
    return max(1, soft_limit - 2 * in_use - FD_MARGIN)


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # no procfs: assume a small process
        return FD_MARGIN


class Admission:
    """The accept loops of every listener and the connections they admitted."""

    def __init__(self, max_connections: int) -> None:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        room = max_connections
        if soft != resource.RLIM_INFINITY:
            room = min(max_connections, fd_room(soft, _open_fds()))
        if room < max_connections:
            _LOGGER.warning(
                "limits.max_connections %d lowered to %d: the descriptor limit is %d "
                "(raise LimitNOFILE= or lower the cap)",
                max_connections,
                room,
                soft,
            )
        self.cap = room
        self._open: dict[asyncio.BaseTransport, Tracked] = {}  # oldest first
        self._starting = 0
        self._lingering = 0  # refused sockets not closed yet

    @property
    def open(self) -> int:
        """Admitted connections, counting those still starting (other loops)."""
        self._prune()
        return len(self._open) + self._starting

    def serve(self, sock: socket.socket, start: Start, refusal: bytes) -> Acceptor:
        """Accept on ``sock``; ``refusal`` is sent to clients past the cap."""
        sock.setblocking(False)
        return Acceptor(asyncio.create_task(self._accept(sock, start, refusal)), self)

    def flush(self) -> None:
        """Log what is still held back (the service is stopping)."""
        CLIENT_LOG.flush()

    async def _accept(self, sock: socket.socket, start: Start, refusal: bytes) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as exc:
                if exc.errno in _OUT_OF_RESOURCES:
                    self._note(_EMFILE)
                    await asyncio.sleep(ACCEPT_RETRY_S)
                elif exc.errno != errno.ECONNABORTED:
                    _LOGGER.warning("accept failed: %s", exc)
                    await asyncio.sleep(ACCEPT_RETRY_S)
                continue
            if self.open >= self.cap and not self._evict():
                self._note(_REFUSED)
                self._refuse(conn, refusal)
                continue
            self._starting += 1
            try:
                tracked = await start(conn)
            except OSError as exc:
                _LOGGER.debug("connection lost while starting: %s", exc)
                conn.close()
                continue
            finally:
                self._starting -= 1
            self._open[tracked.transport] = tracked

    def _prune(self) -> None:
        for t in [t for t in self._open if t.is_closing()]:
            del self._open[t]

    def _evict(self) -> bool:
        for t, tracked in self._open.items():
            if tracked.idle():
                del self._open[t]
                tracked.close()
                self._note(_EVICTED)
                return True
        return False

    def _note(self, what: str) -> None:
        CLIENT_LOG.log(
            _LOGGER,
            what,
            logging.WARNING,
            "connection limit %d (%d open): %s",
            self.cap,
            len(self._open),
            what,
        )

    def _refuse(self, conn: socket.socket, answer: bytes) -> None:
        with contextlib.suppress(OSError):
            conn.send(answer)  # small: fits the buffer of a fresh connection
            conn.shutdown(socket.SHUT_WR)
        if self._lingering >= REFUSALS_LINGERING:
            _close(conn)
            return
        self._lingering += 1

        def close() -> None:
            self._lingering -= 1
            _close(conn)

        asyncio.get_running_loop().call_later(REFUSAL_LINGER_S, close)


def _close(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.recv(_DRAIN_BYTES)
    conn.close()
