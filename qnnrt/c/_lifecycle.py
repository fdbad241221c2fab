"""The one atexit hook: stop NPU workers, wait for in-flight calls, then free.

Why: if the interpreter finalizes while another thread is inside a QNN call and a
Python log callback is installed, QNN calls back into a dying interpreter and the
process segfaults (docs/qnn.md, process exit).  On a board, QNN objects that outlive the
FastRPC session crash at exit too (docs/qnn.md, process exit).  So at exit we
(1) ask registered workers to stop and join them, (2) take each backend's execute
lock so no call is in flight, (3) free everything in structural order.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import weakref
from typing import Any, Final, Protocol, Self

_LOGGER = logging.getLogger(__name__)

#: How long exit waits for an NPU call to return before giving up on a clean free.
EXIT_JOIN_TIMEOUT_S: Final = 120.0
#: Exit status when a QNN call is still running at exit (a stuck NPU): freeing under
#: it would crash, so the process leaves without finalizing (EX_SOFTWARE).
STUCK_EXIT_STATUS: Final = 70


class _Closable(Protocol):
    def close(self) -> None: ...


class Closing:
    """``with`` support for what owns QNN handles (backend, context, group):
    leaving the block calls the owner's ``close``."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Stoppable(Protocol):
    def stop(self, timeout: float | None = None) -> bool: ...


_lock = threading.Lock()
_registered_pid: int | None = None
_backends: weakref.WeakSet[Any] = weakref.WeakSet()
_workers: weakref.WeakSet[Any] = weakref.WeakSet()
_exec_locks: weakref.WeakKeyDictionary[Any, threading.Lock] = (
    weakref.WeakKeyDictionary()
)


def _ensure_registered() -> None:
    global _registered_pid
    with _lock:
        if _registered_pid != os.getpid():
            atexit.register(_at_exit)
            _registered_pid = os.getpid()


def track_backend(backend: _Closable, exec_lock: threading.Lock) -> None:
    """Close ``backend`` at exit if it is still open."""
    _ensure_registered()
    _backends.add(backend)
    _exec_locks[backend] = exec_lock


def track_worker(worker: _Stoppable) -> None:
    """Stop and join ``worker`` at exit before anything is freed."""
    _ensure_registered()
    _workers.add(worker)


def _at_exit(timeout: float = EXIT_JOIN_TIMEOUT_S) -> None:
    if _registered_pid != os.getpid():
        return  # a forked child never tears down the parent's handles
    for worker in list(_workers):
        if not worker.stop(timeout):
            _leave_stuck("NPU worker did not stop")
    for backend in list(_backends):
        lock = _exec_locks.get(backend)
        if lock is not None and not lock.acquire(timeout=timeout):
            _leave_stuck("a QNN call is still running")
        try:
            backend.close()
        except Exception:  # noqa: BLE001 - exit must go on; say what was dropped
            _LOGGER.exception("closing %r at exit failed", backend)
        # The lock stays held: a daemon thread must not start a call on freed handles.


def _leave_stuck(why: str) -> None:
    _LOGGER.error(
        "%s after %.0f s at exit; leaving without freeing QNN", why, EXIT_JOIN_TIMEOUT_S
    )
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(STUCK_EXIT_STATUS)
