"""Listening sockets: our own (mode, group, stale files) and systemd's (by name or
path; never unlinked)."""

from __future__ import annotations

import os
import socket
import stat

import pytest

from daemon.service.config import ListenConfig
from daemon.service.edge.listeners import ListenerError, bind_unix, open_listeners


def test_bound_socket_has_the_mode_from_the_start(tmp_path):
    old = os.umask(0)  # a permissive umask must not leak into the socket
    try:
        sock = bind_unix(tmp_path / "sub" / "a.sock", 0o660, None)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "sub" / "a.sock").st_mode) == 0o660
    sock.close()


def test_refuses_to_replace_a_regular_file(tmp_path):
    (tmp_path / "a.sock").write_text("precious")
    with pytest.raises(ListenerError, match="exists and is not a socket"):
        bind_unix(tmp_path / "a.sock", 0o660, None)
    assert (tmp_path / "a.sock").read_text() == "precious"


def test_inherited_sockets_match_by_name_then_path_and_stay(tmp_path):
    def listening(name: str) -> socket.socket:
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(tmp_path / name))
        s.listen()
        return s

    w, h = listening("w.sock"), listening("h.sock")
    cfg = ListenConfig(wyoming=tmp_path / "w.sock", http=tmp_path / "h.sock")
    # One .socket unit: every fd has the unit's name; the paths tell them apart.
    got = open_listeners(cfg, [("hexvoice", h), ("hexvoice", w)])
    assert [(x.kind, x.sock) for x in got] == [("wyoming", w), ("http", h)]
    assert all(x.owned_path is None for x in got)
    for x in got:
        x.close()
    assert (tmp_path / "w.sock").exists() and (tmp_path / "h.sock").exists()


def test_own_sockets_are_removed_on_close(tmp_path):
    cfg = ListenConfig(wyoming=tmp_path / "w.sock", http=None)
    (x,) = open_listeners(cfg, [])
    assert x.owned_path == tmp_path / "w.sock" and x.label.startswith("unix:")
    x.close()
    assert not (tmp_path / "w.sock").exists()
