"""systemd integration: sd_notify messages, the watchdog period, inherited sockets.

Everything is read from the environment once, as the service starts
(daemon/cli/serve/service.py); without systemd (no ``NOTIFY_SOCKET``, no
``LISTEN_FDS``) each piece is a quiet no-op.
References: sd_notify(3), sd_watchdog_enabled(3), sd_listen_fds(3).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import MutableMapping
from typing import Final

import sdnotify

_LOGGER = logging.getLogger(__name__)

#: sd_listen_fds(3): inherited sockets start at fd 3 (SD_LISTEN_FDS_START).
SD_LISTEN_FDS_START: Final = 3
_USEC_PER_S: Final = 1_000_000
#: Ping at half the watchdog period, as sd_watchdog_enabled(3) recommends.
WATCHDOG_FRACTION: Final = 0.5
#: sysexits.h EX_CONFIG: what a restart cannot fix; the unit's
#: RestartPreventExitStatus=78 stops a restart loop on it.
EX_CONFIG: Final = 78
#: sysexits.h EX_SOFTWARE: a start-up failure a restart may fix (sockets, NPU).
EX_SOFTWARE: Final = 70


class Notifier:
    """Sends ``READY=1``/``STATUS=``/``WATCHDOG=1``/``STOPPING=1`` to systemd."""

    def __init__(self, address: str | None) -> None:
        self.address = address
        self._sd: sdnotify.SystemdNotifier | None = None
        self._warned = False
        if address:
            # sdnotify reads NOTIFY_SOCKET itself; debug=True makes it raise
            # instead of silently dropping messages.
            try:
                self._sd = sdnotify.SystemdNotifier(debug=True)
            except OSError as exc:
                _LOGGER.warning("NOTIFY_SOCKET %s unusable: %s", address, exc)

    @classmethod
    def from_env(cls, env: MutableMapping[str, str] | None = None) -> Notifier:
        env = os.environ if env is None else env
        return cls(env.get("NOTIFY_SOCKET"))

    @property
    def enabled(self) -> bool:
        return self._sd is not None

    def notify(self, *lines: str) -> None:
        if self._sd is None:
            return
        try:
            self._sd.notify("\n".join(lines))
        except (OSError, UnicodeError) as exc:
            if not self._warned:  # one line, not one per watchdog tick
                _LOGGER.warning("sd_notify failed: %s", exc)
                self._warned = True

    def status(self, text: str) -> None:
        self.notify(f"STATUS={one_line(text)}")

    def ready(self, status: str) -> None:
        self.notify("READY=1", f"STATUS={one_line(status)}")

    def reloading(self, status: str) -> None:
        self.notify("RELOADING=1", f"STATUS={one_line(status)}")

    def stopping(self, status: str = "Stopping") -> None:
        self.notify("STOPPING=1", f"STATUS={one_line(status)}")

    def watchdog(self) -> None:
        self.notify("WATCHDOG=1")


def watchdog_period(env: MutableMapping[str, str] | None = None) -> float | None:
    """Seconds between ``WATCHDOG=1`` pings, or None when no watchdog is set."""
    env = os.environ if env is None else env
    usec = env.get("WATCHDOG_USEC")
    if not usec:
        return None
    pid = env.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):
        return None  # meant for another process (sd_watchdog_enabled(3))
    try:
        value = int(usec)
    except ValueError:
        _LOGGER.warning("ignoring malformed WATCHDOG_USEC=%r", usec)
        return None
    return value * WATCHDOG_FRACTION / _USEC_PER_S if value > 0 else None


def listen_fds(
    env: MutableMapping[str, str] | None = None,
) -> list[tuple[str, socket.socket]]:
    """Sockets systemd passed us, with their names, in fd order.

    The variables are removed so children do not inherit them, and each fd is
    made close-on-exec, as sd_listen_fds(unset_environment=1) does.
    """
    env = os.environ if env is None else env
    pid, count = env.get("LISTEN_PID"), env.get("LISTEN_FDS")
    names = env.get("LISTEN_FDNAMES", "")
    for key in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        env.pop(key, None)
    if not pid or not count or pid != str(os.getpid()):
        return []
    try:
        n = int(count)
    except ValueError:
        _LOGGER.warning("ignoring malformed LISTEN_FDS=%r", count)
        return []
    labels = names.split(":") if names else []
    out = []
    for i in range(n):
        fd = SD_LISTEN_FDS_START + i
        os.set_inheritable(fd, False)
        # socket(fileno=) asks the kernel for family and type of the fd.
        sock = socket.socket(fileno=fd)
        out.append((labels[i] if i < len(labels) else "unknown", sock))
    return out


def one_line(text: str) -> str:
    # A newline would start a new sd_notify assignment.
    return " ".join(text.split())
