"""QNN log handle whose messages go to the ``qnnrt.native`` logger."""

from __future__ import annotations

import ctypes as C
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from . import _api
from ._lib import QnnLibrary
from .errors import check

NATIVE_LOGGER: Final = logging.getLogger("qnnrt.native")

#: QnnLog_Level_t → logging level.  QNN's warnings go to the debug log, each
#: text once (:data:`_SEEN_MAX` remembered): on a good run the HTP simulator warns
#: per context ("Sanitizing the value for hvx_threads", "No op packages found for
#: architecture 68", "m_CFBCallbackInfoObj is not initialized"), nothing a user can
#: act on; what fails raises ``QnnError`` with QNN's ERROR line as its cause.
_TO_LOGGING: Final = {
    _api.QNN_LOG_LEVEL_ERROR: logging.ERROR,
    _api.QNN_LOG_LEVEL_WARN: logging.DEBUG,
    _api.QNN_LOG_LEVEL_INFO: logging.INFO,
    _api.QNN_LOG_LEVEL_VERBOSE: logging.DEBUG,
    _api.QNN_LOG_LEVEL_DEBUG: logging.DEBUG,
}
LEVELS: Final = {
    "error": _api.QNN_LOG_LEVEL_ERROR,
    "warning": _api.QNN_LOG_LEVEL_WARN,
    "info": _api.QNN_LOG_LEVEL_INFO,
    "verbose": _api.QNN_LOG_LEVEL_VERBOSE,
    "debug": _api.QNN_LOG_LEVEL_DEBUG,
}
_MESSAGE_BYTES: Final = 2048
#: Distinct warning texts remembered for "once" (a bound: texts carrying handles
#: or sizes differ per call, and must not grow a set forever).
_SEEN_MAX: Final = 1024
_seen_warnings: set[str] = set()

_state: dict[str, object] = {}


class _Held(threading.local):
    lines: list[tuple[int, str]] | None = None


_held = _Held()


def _format(fmt: bytes, va_list: int | None) -> str:
    libc = _state.get("libc")
    if libc is None:
        libc = C.CDLL(None)
        libc.vsnprintf.argtypes = (C.c_char_p, C.c_size_t, C.c_char_p, C.c_void_p)
        libc.vsnprintf.restype = C.c_int
        _state["libc"] = libc
    buf = C.create_string_buffer(_MESSAGE_BYTES)
    # x86_64: va_list decays to a pointer; aarch64 passes it by reference, so the
    # pointer we receive is again what vsnprintf expects.
    libc.vsnprintf(buf, _MESSAGE_BYTES, fmt, va_list)  # type: ignore[attr-defined]
    return buf.value.decode(errors="replace").rstrip()


def _on_log(fmt: bytes, level: int, timestamp: int, va_list: int | None) -> None:
    # Runs on QNN's threads.  Never let an exception escape into C.
    try:
        py_level = _TO_LOGGING.get(level, logging.DEBUG)
        held = _held.lines
        if held is not None:
            if NATIVE_LOGGER.isEnabledFor(py_level):
                held.append((py_level, _format(fmt, va_list)))
            return
        if not NATIVE_LOGGER.isEnabledFor(py_level):
            return
        text = _format(fmt, va_list)
        if level == _api.QNN_LOG_LEVEL_WARN and not _first_time(text):
            return
        NATIVE_LOGGER.log(py_level, "%s", text)
    except Exception:  # noqa: BLE001 - nothing sane to do inside a C callback
        pass


def _first_time(warning: str) -> bool:
    key = warning.split("<W>", 1)[-1].strip()  # without QNN's timestamp prefix
    if key in _seen_warnings:
        return False
    if len(_seen_warnings) < _SEEN_MAX:
        _seen_warnings.add(key)
    return True


@contextmanager
def held_native() -> Iterator[list[tuple[int, str]]]:
    """Collect QNN's messages on this thread instead of logging them.

    For calls whose failure is an expected answer (the simulator refusing a
    multi-context group, a memRegister probe): QNN logs such a refusal as several
    ERROR lines.  The caller either folds them into one line of its own or
    :func:`replay` s them.  QNN calls back on the calling thread (measured on the
    simulator); messages from other threads are logged as usual.
    """
    outer, _held.lines = _held.lines, []
    try:
        yield _held.lines
    finally:
        _held.lines = outer


def replay(lines: list[tuple[int, str]], below: int | None = None) -> None:
    """Log held messages as they would have been logged (those under ``below``)."""
    for level, text in lines:
        if below is None or level < below:
            NATIVE_LOGGER.log(level, "%s", text)


def first_error(lines: list[tuple[int, str]]) -> str:
    """The first held ERROR message (QNN's cause; the rest restate it), or ""."""
    for level, text in lines:
        if level >= logging.ERROR:
            return text.split("<E>", 1)[-1].strip()
    return ""


def _callback() -> object:
    # One CFUNCTYPE object for the whole process, never released: QNN may call it
    # from its own threads until the very end, and a collected trampoline is a crash.
    cb = _state.get("callback")
    if cb is None:
        cb = _state["callback"] = _api.QnnLog_Callback_t(_on_log)
    return cb


class Logger:
    """A QNN log handle (``logCreate``); freed by :meth:`close`."""

    def __init__(self, lib: QnnLibrary, level: str | int | None = None) -> None:
        self._lib = lib
        self._pid = os.getpid()
        if isinstance(level, str):
            if level not in LEVELS:
                raise ValueError(f"log level {level!r}: expected one of {list(LEVELS)}")
            level = LEVELS[level]
        # Default WARN, whatever the root logger says: QNN's INFO level is a flood
        # (several lines per execute).  Ask for more explicitly.
        self.level = _api.QNN_LOG_LEVEL_WARN if level is None else int(level)
        handle = _api.Qnn_Handle_t()
        check(
            lib.core("logCreate")(_callback(), self.level, C.byref(handle)),
            "logCreate",
        )
        self.handle: int | None = handle.value

    def close(self) -> None:
        handle, self.handle = self.handle, None
        if handle is not None and os.getpid() == self._pid:
            check(self._lib.core("logFree")(handle), "logFree")
