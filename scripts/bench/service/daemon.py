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
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx

from daemon.protocols.openai.encoders import OPENAI_PCM_RATE, SAMPLE_WIDTH
from scripts.bench.service.serve import http_speech, start_daemon, wyoming_synthesize

DEFAULT_TEXT: Final = (
    "The quick brown fox jumps over the lazy dog. "
    "Then it naps in the afternoon sun, far from the farm."
)
HTTP_TIMEOUT_S: Final = 600.0


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


async def _wyoming(sock_dir: Path, text: str) -> Run:
    r = await wyoming_synthesize(sock_dir / "wyoming.sock", text)
    return Run(r.first_s or 0.0, r.end_s, r.nbytes / SAMPLE_WIDTH / r.rate)


#: the statuses of a request the service turned away for now (queue full,
#: no voice loaded yet): counted busy, not failed
BUSY_STATUSES = (429, 503)


class HttpRefused(Exception):
    """The service answered with an error body, not audio."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


async def _http(sock_dir: Path, text: str) -> Run:
    """Only a 200's body is audio: an error body (a 429's JSON) is refused."""
    r = await http_speech(sock_dir / "http.sock", text, HTTP_TIMEOUT_S)
    if r.status != 200:
        raise HttpRefused(r.status)
    return Run(r.first_s or 0.0, r.end_s, r.nbytes / SAMPLE_WIDTH / OPENAI_PCM_RATE)


def outcome(run: Run | None, error: Exception | None) -> str:
    """One throughput request as "ok" (audio came), "busy" (turned away for
    now) or "failed"."""
    if isinstance(error, HttpRefused):
        return "busy" if error.status in BUSY_STATUSES else "failed"
    if error is not None or run is None:
        return "failed"
    return "ok" if run.audio_s > 0 else "busy"  # a Wyoming busy error: no audio


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
                counts[outcome(await call(sock_dir, text), None)] += 1
            except (OSError, httpx.HTTPError, HttpRefused) as exc:
                counts[outcome(None, exc)] += 1
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
