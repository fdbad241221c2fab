"""Cooperative cancellation shared by every engine task.

Engines call ``CancelToken.check()`` between two graph calls; the host cancels
a token when a client leaves or a request's deadline passes.
"""

from __future__ import annotations

import threading
import time


class Cancelled(Exception):
    """Work stopped because its :class:`CancelToken` fired."""


class CancelToken:
    """Cooperative cancellation: engines call :meth:`check` between graph calls."""

    def __init__(self, deadline: float | None = None) -> None:
        self._event = threading.Event()
        self.deadline = deadline  # time.monotonic() value
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.reason = self.reason or "deadline passed"
            self._event.set()
            return True
        return False

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled(self.reason)
