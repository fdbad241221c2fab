"""What the command-line tests share: ``hexvoice`` run as a user runs it (a
subprocess from the checkout, its output as text), and a free TCP port for a
listener the service is told to open."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from tests.daemon.conftest import ROOT

#: A command that answers from a running service or a small bundle.
TIMEOUT_S = 60.0


def hexvoice(
    *args: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """``hexvoice ARGS`` (``python -m daemon.cli``), ``env`` over ours."""
    return subprocess.run(
        [sys.executable, "-m", "daemon.cli", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
