"""sd_notify to a real datagram socket, the watchdog period, inherited sockets,
and the unit files under systemd/ (``systemd-analyze verify`` / ``security``)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.service.edge import systemd
from tests.daemon.conftest import ROOT

UNITS = ROOT / "systemd"
needs_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze missing (apt-get install systemd)",
)


@pytest.fixture
def sink(tmp_path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(tmp_path / "notify.sock"))
    s.settimeout(2)
    yield s
    s.close()


def test_notifier_sends_datagrams(sink, monkeypatch):
    monkeypatch.setenv("NOTIFY_SOCKET", sink.getsockname())
    n = systemd.Notifier.from_env()
    assert n.enabled
    n.ready("Ready: 1 voice\nsecond line")
    n.watchdog()
    n.stopping()
    assert sink.recv(4096) == b"READY=1\nSTATUS=Ready: 1 voice second line"
    assert sink.recv(4096) == b"WATCHDOG=1"
    assert sink.recv(4096) == b"STOPPING=1\nSTATUS=Stopping"


def test_notifier_without_systemd_is_a_no_op(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    n = systemd.Notifier.from_env()
    assert not n.enabled
    n.ready("nobody listens")  # no error


def test_notifier_survives_a_vanished_socket(tmp_path, monkeypatch, caplog):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(tmp_path / "n.sock"))
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "n.sock"))
    n = systemd.Notifier.from_env()
    s.close()
    (tmp_path / "n.sock").unlink()
    n.watchdog()
    n.watchdog()
    assert [r.message for r in caplog.records].count(
        "sd_notify failed: [Errno 111] Connection refused"
    ) <= 1


@pytest.mark.parametrize(
    "env,period",
    [
        ({}, None),
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "400000", "WATCHDOG_PID": "self"}, 0.2),
        ({"WATCHDOG_USEC": "400000", "WATCHDOG_PID": "1"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({"WATCHDOG_USEC": "0"}, None),
    ],
)
def test_watchdog_period_is_half(env, period):
    env = {k: str(os.getpid()) if v == "self" else v for k, v in env.items()}
    assert systemd.watchdog_period(env) == (pytest.approx(period) if period else None)


def test_listen_fds_ignores_fds_meant_for_another_process():
    env = {"LISTEN_PID": "1", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "wyoming:http"}
    assert systemd.listen_fds(env) == []
    assert env == {}  # unset, so children do not inherit them


def test_listen_fds_names_inherited_sockets(tmp_path):
    """A child gets two listening sockets at fds 3 and 4, as systemd passes them."""
    socks = []
    for name in ("w.sock", "h.sock"):
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(tmp_path / name))
        s.listen()
        socks.append(s)
    fds = [s.fileno() for s in socks]
    code = (
        "import os; from daemon.service.edge import systemd\n"
        # put the listeners where systemd puts them: fds 3 and 4
        f"os.dup2({fds[0]}, 3); os.dup2({fds[1]}, 4)\n"
        f"os.close({fds[0]}); os.close({fds[1]})\n"
        "os.environ['LISTEN_PID'] = str(os.getpid())\n"
        "got = systemd.listen_fds()\n"
        "print([(n, s.fileno(), s.getsockname(), os.get_inheritable(s.fileno()))"
        " for n, s in got], 'LISTEN_FDS' in os.environ)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "LISTEN_FDS": "2", "LISTEN_FDNAMES": "wyoming:http"},
        pass_fds=fds,
        capture_output=True,
        text=True,
        timeout=30,
    )
    for s in socks:
        s.close()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (
        f"[('wyoming', 3, '{tmp_path}/w.sock', False), "
        f"('http', 4, '{tmp_path}/h.sock', False)] False"
    )


def _units_for_verify(tmp_path: Path) -> Path:
    """Copies of the units whose ExecStart binary exists here.

    ``systemd-analyze verify`` fails on a missing executable; CI has no
    /opt/hexvoice, so the copy points at a stub (everything else is verbatim).
    """
    for f in UNITS.glob("hexvoice.*"):
        shutil.copy(f, tmp_path / f.name)
    stub = tmp_path / "hexvoice"
    stub.write_text("#!/bin/sh\n")
    stub.chmod(0o755)
    service = tmp_path / "hexvoice.service"
    text = service.read_text()
    assert "ExecStart=/opt/hexvoice/venv/bin/hexvoice serve" in text  # install.sh
    service.write_text(text.replace("/opt/hexvoice/venv/bin/hexvoice", str(stub)))
    return tmp_path


@needs_analyze
def test_units_verify(tmp_path):
    d = _units_for_verify(tmp_path)
    r = subprocess.run(
        [
            "systemd-analyze",
            "verify",
            str(d / "hexvoice.service"),
            str(d / "hexvoice.socket"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr


#: The first line of the README's TCP drop-in block (Home Assistant over TCP).
DROP_IN_HEADER = "# /etc/systemd/system/hexvoice.service.d/tcp.conf"


def _readme_drop_in() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(DROP_IN_HEADER)
    return text[start : text.index("```", start)]


def _verify_with(tmp_path: Path, drop_in: str) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir()
    d = _units_for_verify(tmp_path)
    (d / "hexvoice.service.d").mkdir()
    (d / "hexvoice.service.d" / "tcp.conf").write_text(drop_in)
    return subprocess.run(
        ["systemd-analyze", "verify", str(d / "hexvoice.service")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@needs_analyze
def test_readme_tcp_drop_in_verifies_and_opens_ip(tmp_path):
    drop_in = _readme_drop_in()
    assert "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" in drop_in
    assert re.search(r"^IPAddressAllow=\S+", drop_in, re.M), drop_in
    r = _verify_with(tmp_path / "good", drop_in)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    # The drop-in is read from there: a wrong key in it is reported.
    r = _verify_with(tmp_path / "bad", drop_in + "RestrictAdressFamilies=AF_INET\n")
    assert "Unknown key 'RestrictAdressFamilies'" in r.stderr, r.stderr


@needs_analyze
def test_service_hardening_is_rated_ok(tmp_path):
    d = _units_for_verify(tmp_path)
    r = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", str(d / "hexvoice.service")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    m = re.search(
        r"Overall exposure level for hexvoice.service: ([0-9.]+) (\w+)", r.stdout
    )
    assert m, r.stdout + r.stderr
    assert float(m.group(1)) <= 2.0 and m.group(2) == "OK"


def test_unit_facts():
    service = (UNITS / "hexvoice.service").read_text()
    socket_unit = (UNITS / "hexvoice.socket").read_text()
    for line in (
        "Type=notify",
        "WatchdogSec=30",
        "Restart=on-failure",
        "RestartPreventExitStatus=78",
        "User=hexvoice",
        "RuntimeDirectory=hexvoice",
        "RuntimeDirectoryPreserve=yes",
        "DevicePolicy=closed",
        "DeviceAllow=/dev/fastrpc-cdsp rw",
        "DeviceAllow=/dev/adsprpc-smd rw",
        "ExecReload=/bin/kill -HUP $MAINPID",
    ):
        assert line in service.splitlines()
    # PrivateDevices= would hide the FastRPC nodes
    assert not re.search(r"^PrivateDevices=", service, re.M)
    for line in (
        "ListenStream=/run/hexvoice/wyoming.sock",
        "ListenStream=/run/hexvoice/http.sock",
        "SocketMode=0660",
        "SocketGroup=hexvoice-clients",
    ):
        assert line in socket_unit.splitlines()
    users = (UNITS / "hexvoice.sysusers").read_text()
    assert re.search(r"^u hexvoice ", users, re.M)
    assert re.search(r"^g hexvoice-clients ", users, re.M)
    tmpfiles = (UNITS / "hexvoice.tmpfiles").read_text()
    assert re.search(r"^d /run/hexvoice 0755 hexvoice hexvoice", tmpfiles, re.M)
