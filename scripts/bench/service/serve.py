"""``hexvoice serve`` as a child process for the service benchmarks, and the
two clients they time a request with (Wyoming and HTTP on its Unix sockets).

The child runs as systemd would run it: READY=1 read from a real
NOTIFY_SOCKET, its config and sockets in a temporary directory.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx
import yaml
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

#: the repository root (scripts/bench/service/serve.py is three folders down)
ROOT: Final = Path(__file__).resolve().parents[3]
START_TIMEOUT_S: Final = 600.0


def start_daemon(  # noqa: ANN201
    tmp: Path,
    bundle: Path,
    backend: str,
    listen: dict[str, str] | None = None,
    limits: dict[str, float] | None = None,
):
    """``hexvoice serve`` as a child, once READY=1: (process, socket dir).
    ``listen`` adds listeners (e.g. ``tcp_wyoming``) to the two Unix sockets;
    ``limits`` overrides config limits."""
    sock_dir = tmp / "run"
    cfg = {
        "voices": [str(bundle)],
        "engine": {"backend": backend},
        "listen": {
            "wyoming": str(sock_dir / "wyoming.sock"),
            "http": str(sock_dir / "http.sock"),
            **(listen or {}),
        },
        "limits": {"max_input_chars": 50_000, **(limits or {})},
    }
    (tmp / "config.yaml").write_text(yaml.safe_dump(cfg))
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp / "notify.sock"))
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp / "notify.sock")}
    argv = ["-m", "daemon.cli", "serve", "--config", str(tmp / "config.yaml")]
    proc = subprocess.Popen(
        [sys.executable, *argv],
        cwd=ROOT,
        env=env,
        stderr=open(tmp / "daemon.log", "wb"),  # noqa: SIM115 - the child owns it
    )
    t0 = time.monotonic()
    notify.settimeout(1.0)
    while True:
        try:
            if b"READY=1" in notify.recv(4096):
                break
        except TimeoutError:
            if proc.poll() is not None or time.monotonic() - t0 > START_TIMEOUT_S:
                log = (tmp / "daemon.log").read_text(errors="replace")
                raise SystemExit(f"daemon did not get ready:\n{log[-2000:]}") from None
    notify.close()
    print(f"# daemon ready in {time.monotonic() - t0:.1f} s", flush=True)
    return proc, sock_dir


@dataclass
class Reply:
    """What a client saw of one request, in seconds from the moment it was sent."""

    first_s: float | None = None  # the first audio chunk (HTTP: the first bytes)
    end_s: float = 0.0  # the client stopped reading, whatever ended it
    nbytes: int = 0  # audio bytes (HTTP: body bytes, whatever the status)
    rate: int = 1  # Wyoming: the chunks' sample rate
    stopped: bool = False  # Wyoming: audio-stop arrived
    error: str = ""  # Wyoming: the error event's text
    status: int = 0  # HTTP: the response status
    body: bytes = b""  # HTTP: the body of a response that is not 200


async def wyoming_synthesize(sock: Path, text: str) -> Reply:
    """A Wyoming ``synthesize`` of ``text`` on the Unix socket ``sock``, read
    until audio-stop, an error or the end of the stream."""
    r = Reply()
    c = AsyncClient.from_uri(f"unix://{sock}")
    await c.connect()
    t0 = time.perf_counter()
    await c.write_event(Synthesize(text).event())
    while (e := await c.read_event()) is not None:
        if e.type == "audio-chunk":
            r.first_s = r.first_s if r.first_s is not None else time.perf_counter() - t0
            r.nbytes += len(e.payload or b"")
            r.rate = e.data["rate"]
        elif e.type == "error":
            r.error = str(e.data.get("text"))
            break
        elif e.type == "audio-stop":
            r.stopped = True
            break
    r.end_s = time.perf_counter() - t0
    await c.disconnect()
    return r


async def http_speech(sock: Path, text: str, timeout: float) -> Reply:
    """An OpenAI ``/v1/audio/speech`` request for raw PCM on the Unix socket
    ``sock``, its body read to the end."""
    r = Reply()
    transport = httpx.AsyncHTTPTransport(uds=str(sock))
    body = {"model": "tts-1", "input": text, "voice": "alloy", "response_format": "pcm"}
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as c:
        t0 = time.perf_counter()
        async with c.stream("POST", "http://x/v1/audio/speech", json=body) as resp:
            r.status = resp.status_code
            async for chunk in resp.aiter_bytes():
                r.first_s = (
                    r.first_s if r.first_s is not None else time.perf_counter() - t0
                )
                r.nbytes += len(chunk)
                if r.status != 200:
                    r.body += chunk
        r.end_s = time.perf_counter() - t0
    return r
