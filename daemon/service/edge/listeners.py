"""Listening sockets: take what systemd passed us, bind the rest ourselves.

An inherited socket is matched by its ``LISTEN_FDNAMES`` name (``wyoming`` or
``http``), or else by its path (one ``.socket`` unit gives all its fds the same
name).  Sockets systemd handed us are never unlinked; paths we bound are removed
at exit.  Our own Unix sockets are created with the configured mode from the
start (umask around ``bind``) so there is no window with looser permissions.
"""

from __future__ import annotations

import errno
import grp
import logging
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from daemon.service.config import ListenConfig

_LOGGER = logging.getLogger(__name__)
KINDS: Final = ("wyoming", "http")
#: listen(2) backlog: bursts of clients wait in the kernel, not in RAM.
BACKLOG: Final = 128
_DIR_MODE: Final = 0o755


class ListenerError(OSError):
    """A socket could not be set up; the message says which and why."""


@dataclass
class Listener:
    kind: str  # "wyoming" | "http"
    sock: socket.socket
    owned_path: Path | None = None  # set when we created the file

    @property
    def label(self) -> str:
        name = self.sock.getsockname()
        if isinstance(name, (str, bytes)):
            return f"unix:{os.fsdecode(name)}"
        return f"tcp:{name[0]}:{name[1]}"

    def close(self) -> None:
        self.sock.close()
        if self.owned_path is not None:
            try:
                self.owned_path.unlink()
            except FileNotFoundError:
                pass


def open_listeners(
    cfg: ListenConfig, inherited: list[tuple[str, socket.socket]]
) -> list[Listener]:
    out: list[Listener] = []
    try:
        spare = list(inherited)
        for kind in KINDS:
            path: Path | None = getattr(cfg, kind)
            mine = [s for name, s in spare if name == kind]
            if not mine and path is not None:
                mine = [
                    s for name, s in spare if name not in KINDS and _path(s) == path
                ]
            spare = [(n, s) for n, s in spare if s not in mine]
            out += [Listener(kind, s) for s in mine]
            if not mine and path is not None:
                out.append(
                    Listener(
                        kind, bind_unix(path, cfg.socket_mode, cfg.socket_group), path
                    )
                )
            tcp = cfg.tcp_wyoming if kind == "wyoming" else cfg.tcp_http
            if tcp is not None:
                out.append(Listener(kind, bind_tcp(*tcp)))
        for name, s in spare:
            _LOGGER.warning(
                "ignoring passed socket %r (%s): no listener wants it", name, _path(s)
            )
    except BaseException:
        for listener in out:
            listener.close()
        raise
    return out


def bind_unix(path: Path, mode: int, group: str | None) -> socket.socket:
    path.parent.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
    _remove_stale(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o777 & ~mode)
    try:
        sock.bind(str(path))
    except OSError as exc:
        sock.close()
        raise ListenerError(exc.errno, f"cannot bind {path}: {exc.strerror}") from None
    finally:
        os.umask(old)
    try:
        os.chmod(path, mode)
        if group is not None:
            os.chown(path, -1, grp.getgrnam(group).gr_gid)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        path.unlink(missing_ok=True)
        raise ListenerError(
            exc.errno, f"cannot set up {path}: {exc.strerror}"
        ) from None
    return sock


def bind_tcp(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=BACKLOG)
    except OSError as exc:
        raise ListenerError(
            exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}"
        ) from None


def _remove_stale(path: Path) -> None:
    """Unlink a socket file nobody listens on; refuse to touch anything else."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise ListenerError(errno.EEXIST, f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)  # left behind by a crashed instance
        return
    finally:
        probe.close()
    raise ListenerError(errno.EADDRINUSE, f"another server is listening on {path}")


def _path(sock: socket.socket) -> Path | None:
    if sock.family != socket.AF_UNIX:
        return None
    name = sock.getsockname()
    return Path(os.fsdecode(name)) if name else None
