"""Log lines a client can cause, at most one per ``LOG_INTERVAL_S`` per kind.

A client decides how often a malformed request, a timed-out header or a
refused connection happens, so a line per event lets any client fill the disk
(measured before this limiter: 86 INFO lines from one flood of stalled Wyoming
connections, an ERROR with a traceback per malformed HTTP request).
``CLIENT_LOG`` is the one limiter for all of them, keyed by (logger, kind): the
first line of a kind is logged at once and opens a window; lines of that kind
within the window are counted, and when it ends the last of them is logged
once more with how many were held back ("... (N similar suppressed in the last
10 s)"), which opens the next window.  A window in which nothing was held back
closes silently, so an occasional fault is still logged as it happens.
``flush`` says what is held when the service stops.

Every caller runs on the event loop; the window's end is a ``call_later``.  A
window whose loop is gone (an in-process test's ``asyncio.run`` ended) is
closed by the next line of its kind once its time is up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Final

#: At most one line per this many seconds per kind: a flood costs 6 lines a
#: minute, and a human reading the log still sees a fault within seconds.
LOG_INTERVAL_S: Final = 10.0
_SUPPRESSED: Final = " (%d similar suppressed in the last %s s)"


@dataclass
class _Window:
    logger: logging.Logger
    opened: float  # time.monotonic()
    timer: asyncio.TimerHandle | None
    held: int = 0
    #: the last line held back: (level, message, args)
    last: tuple[int, str, tuple[Any, ...]] | None = None


class ClientLog:
    """The limiter (one per process: ``CLIENT_LOG``; tests make their own)."""

    def __init__(self, interval: float = LOG_INTERVAL_S) -> None:
        self.interval = interval
        self._windows: dict[tuple[str, str], _Window] = {}

    def log(
        self, logger: logging.Logger, kind: str, level: int, msg: str, *args: Any
    ) -> None:
        """``logger.log(level, msg, *args)``, unless a line of ``kind`` was
        logged in this window (then it is counted and said at its end)."""
        if not logger.isEnabledFor(level):
            return
        key = (logger.name, kind)
        window = self._windows.get(key)
        if window is not None and time.monotonic() - window.opened >= self.interval:
            self._end(key)  # its timer did not run: its loop is gone
            window = self._windows.get(key)
        if window is None:
            logger.log(level, msg, *args)
            self._open(key, logger)
            return
        window.held += 1
        window.last = (level, msg, args)

    def flush(self) -> None:
        """Say what every window holds, and close them (the service stops)."""
        for key in list(self._windows):
            window = self._windows.pop(key)
            if window.timer is not None:
                window.timer.cancel()
            _say(window)

    def _open(self, key: tuple[str, str], logger: logging.Logger) -> None:
        timer = None
        with contextlib.suppress(RuntimeError):  # no running loop: see module doc
            loop = asyncio.get_running_loop()
            timer = loop.call_later(self.interval, self._end, key)
        self._windows[key] = _Window(logger, time.monotonic(), timer)

    def _end(self, key: tuple[str, str]) -> None:
        window = self._windows.pop(key)
        if window.timer is not None:
            window.timer.cancel()  # a no-op when it is the timer that ended it
        if window.held:
            _say(window)
            self._open(key, window.logger)  # the summary is this window's line


def _say(window: _Window) -> None:
    if window.last is None:
        return
    level, msg, args = window.last
    # To a tenth, "10" for a window that ran its course.
    seconds = f"{time.monotonic() - window.opened:.1f}".removesuffix(".0")
    window.logger.log(level, msg + _SUPPRESSED, *args, window.held, seconds)


#: The service's one limiter.
CLIENT_LOG: Final = ClientLog()
