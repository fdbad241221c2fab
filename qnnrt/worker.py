"""``NpuWorker``: one thread that owns every QNN call of a process.

QNN handles are used from this thread only, so exit can stop it between two calls
and free the handles safely (see ``_lifecycle``).  Work is submitted as callables
and comes back as ``concurrent.futures.Future``.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Final, TypeVar

from .c import _lifecycle

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")
_STOP: Final = object()


class WorkerStopped(RuntimeError):
    """Work was submitted to (or left queued in) a stopped NPU worker."""


class NpuWorker:
    """A daemon thread running submitted callables one at a time, in order."""

    def __init__(self, name: str = "npu") -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._busy_since: float | None = None
        # Daemon: interpreter shutdown must not block on a thread idling in get();
        # the atexit hook stops and joins it before any QNN handle is freed.
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        _lifecycle.track_worker(self)

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
        """Queue ``fn(*args, **kwargs)``; result or exception lands in the Future."""
        if self._stopping.is_set():
            raise WorkerStopped(f"worker {self._thread.name!r} is stopped")
        fut: Future[T] = Future()
        self._queue.put((fut, fn, args, kwargs))
        return fut

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` on the worker and wait for it."""
        if threading.current_thread() is self._thread:
            return fn(*args, **kwargs)
        return self.submit(fn, *args, **kwargs).result()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    @property
    def busy_since(self) -> float | None:
        """``time.monotonic()`` when the running job started, None when idle."""
        return self._busy_since

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                break
            fut, fn, args, kwargs = item
            if not fut.set_running_or_notify_cancel():
                continue
            if self._stopping.is_set():
                fut.set_exception(WorkerStopped("NPU worker stopped"))
                continue
            self._busy_since = time.monotonic()
            try:
                fut.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - delivered to the caller
                fut.set_exception(exc)
            finally:
                self._busy_since = None
        self._drain()

    def _drain(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                item[0].set_exception(WorkerStopped("NPU worker stopped"))

    def stop(self, timeout: float | None = None) -> bool:
        """Finish the running job, fail queued ones, join.  True if the thread ended."""
        if not self._stopping.is_set():
            self._stopping.set()
            self._queue.put(_STOP)
        if threading.current_thread() is self._thread:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()
