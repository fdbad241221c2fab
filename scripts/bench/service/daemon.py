"""Benchmark ``hexvoice serve``: time to first audio and RTF per protocol, side by
side with the engine called in-process, then requests/minute held by N clients.

    python -m scripts.bench.service.daemon --bundle DIR [--backend cpu] [--seconds 60]

The daemon runs as a subprocess on Unix sockets in a temporary directory, as
systemd would run it (READY=1 read from a real NOTIFY_SOCKET).  In-process runs
first, alone, so the two never share the CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx
import yaml
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

ROOT: Final = Path(__file__).resolve().parents[2]
DEFAULT_TEXT: Final = (
    "The quick brown fox jumps over the lazy dog. "
    "Then it naps in the afternoon sun, far from the farm."
)
START_TIMEOUT_S: Final = 600.0
SAMPLE_WIDTH: Final = 2


@dataclass
class Run:
    ttfa_s: float
    total_s: float
    audio_s: float

    @property
    def rtf(self) -> float:
        return self.total_s / self.audio_s if self.audio_s else float("nan")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bundle", type=Path, required=True, help="voice bundle dir")
    p.add_argument("--backend", choices=("qnn", "cpu"), default="qnn")
    p.add_argument("--text", default=DEFAULT_TEXT)
    p.add_argument("--rounds", type=int, default=5, help="per protocol (median)")
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--seconds", type=float, default=60.0, help="throughput phase")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hvbench") as tmp:
        tmpdir = Path(tmp)
        bundle = a.bundle.resolve()  # the config file lives in a temp dir
        print(f"# bundle {bundle} on {a.backend}; text {len(a.text)} chars", flush=True)
        local = _in_process(bundle, a.backend, a.text, a.rounds)
        daemon, sock_dir = start_daemon(tmpdir, bundle, a.backend)
        try:
            wy = [asyncio.run(_wyoming(sock_dir, a.text)) for _ in range(a.rounds)]
            ht = [asyncio.run(_http(sock_dir, a.text)) for _ in range(a.rounds)]
            print()
            print(f"{'path':<12} {'TTFA ms':>9} {'total ms':>9} {'RTF':>7}")
            for name, runs in (("in-process", local), ("wyoming", wy), ("http", ht)):
                med = _median(runs)
                print(
                    f"{name:<12} {med.ttfa_s * 1e3:9.1f} {med.total_s * 1e3:9.1f} "
                    f"{med.rtf:7.3f}"
                )
            ok, busy, failed = asyncio.run(
                _throughput(sock_dir, a.text, a.clients, a.seconds)
            )
            rpm = ok * 60.0 / a.seconds
            print(
                f"\n{a.clients} clients for {a.seconds:.0f} s: {ok} served "
                f"({rpm:.1f} requests/minute), {busy} busy, {failed} failed"
            )
        finally:
            daemon.terminate()
            code = daemon.wait(60)
            print(f"# daemon exited {code}")
    return 0


def _in_process(bundle: Path, backend: str, text: str, rounds: int) -> list[Run]:
    from daemon.sdk.tts import SynthesisOptions
    from daemon.service.config import EngineConfig, ServeConfig, VoiceSource
    from daemon.service.voices.voiceset import VoiceSet

    cfg = ServeConfig(
        voices=(VoiceSource(bundle),), engine=EngineConfig(backend=backend)
    )
    vs = VoiceSet.open_all(cfg)
    try:
        engine, _ = next(iter(vs.by_voice.values()))
        runs = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            first, audio = None, 0.0
            for chunk in engine.synthesize(text, SynthesisOptions()):
                first = first if first is not None else time.perf_counter() - t0
                audio += chunk.seconds
            runs.append(Run(first or 0.0, time.perf_counter() - t0, audio))
        return runs
    finally:
        vs.close()


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


async def _wyoming(sock_dir: Path, text: str) -> Run:
    c = AsyncClient.from_uri(f"unix://{sock_dir / 'wyoming.sock'}")
    await c.connect()
    t0 = time.perf_counter()
    await c.write_event(Synthesize(text).event())
    first, nbytes, rate = None, 0, 1
    while (e := await c.read_event()) is not None:
        if e.type == "audio-chunk":
            first = first if first is not None else time.perf_counter() - t0
            nbytes += len(e.payload or b"")
            rate = e.data["rate"]
        elif e.type in ("audio-stop", "error"):
            break
    total = time.perf_counter() - t0
    await c.disconnect()
    return Run(first or 0.0, total, nbytes / SAMPLE_WIDTH / rate)


async def _http(sock_dir: Path, text: str) -> Run:
    transport = httpx.AsyncHTTPTransport(uds=str(sock_dir / "http.sock"))
    async with httpx.AsyncClient(transport=transport, timeout=600) as c:
        body = {"model": "tts-1", "input": text, "voice": "alloy"}
        body["response_format"] = "pcm"
        t0 = time.perf_counter()
        first, nbytes = None, 0
        async with c.stream("POST", "http://x/v1/audio/speech", json=body) as r:
            async for chunk in r.aiter_bytes():
                first = first if first is not None else time.perf_counter() - t0
                nbytes += len(chunk)
        total = time.perf_counter() - t0
    return Run(first or 0.0, total, nbytes / SAMPLE_WIDTH / 24000)


async def _throughput(
    sock_dir: Path, text: str, clients: int, seconds: float
) -> tuple[int, int, int]:
    """Clients alternate Wyoming and HTTP, back to back, until time is up."""
    end = time.monotonic() + seconds
    counts = {"ok": 0, "busy": 0, "failed": 0}

    async def client(i: int) -> None:
        call: Callable[[Path, str], Awaitable[Run]] = _wyoming if i % 2 else _http
        while time.monotonic() < end:
            try:
                run = await call(sock_dir, text)
                counts["ok" if run.audio_s > 0 else "busy"] += 1
            except (OSError, httpx.HTTPError):
                counts["failed"] += 1
            if time.monotonic() >= end:
                break

    await asyncio.gather(*(client(i) for i in range(clients)))
    return counts["ok"], counts["busy"], counts["failed"]


def _median(runs: list[Run]) -> Run:
    return Run(
        statistics.median(r.ttfa_s for r in runs),
        statistics.median(r.total_s for r in runs),
        statistics.median(r.audio_s for r in runs),
    )


if __name__ == "__main__":
    sys.exit(main())
