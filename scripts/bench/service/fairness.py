"""Benchmark the NPU worker's fairness: a short request queued behind long ones.

    python -m scripts.bench.service.fairness --bundle DIR [--backend cpu] [--chars 4000]

``hexvoice serve`` runs as a subprocess on Unix sockets (scripts/bench/service/serve.py
starts it).  Two requests of ``--chars`` characters go in over HTTP, one after
the other; once both are admitted a one-sentence request follows over Wyoming.
It prints, from the moment each was sent, when its first audio arrived and when
it ended: first come, first served makes the sentence wait for both long
requests; a round robin of sentences makes it wait for one sentence of each.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from scripts.bench.service.serve import http_speech, start_daemon, wyoming_synthesize

#: The case README.md measures: two requests of 4000 characters and one sentence.
LONG_CHARS: Final = 4000
LONG_REQUESTS: Final = 2
SENTENCE: Final = "Is my short answer ready yet?"
#: One sentence of the long texts, repeated up to ``--chars``.
LONG_SENTENCE: Final = (
    "The quick brown fox jumps over the lazy dog, then naps in the warm sun. "
)
#: Time for the long requests to be admitted before the short one is sent (s):
#: far above one request's parse and check, far below a sentence's synthesis.
ADMIT_S: Final = 0.5
#: A request that has not ended by then is reported as such (the service's own
#: default deadline is 120 s; the bench config raises it to see the end).
CLIENT_TIMEOUT_S: Final = 1800.0


@dataclass
class Timing:
    name: str
    first_s: float | None = None
    total_s: float | None = None
    error: str = ""


def long_text(chars: int) -> str:
    text = LONG_SENTENCE * (chars // len(LONG_SENTENCE) + 1)
    cut = text[:chars].rsplit(" ", 1)[0]
    return cut.rstrip(",") + "."


async def _http(sock: Path, text: str, t: Timing) -> None:
    r = await http_speech(sock, text, CLIENT_TIMEOUT_S)
    if r.status != 200:
        t.error = f"HTTP {r.status}: {r.body[:200]!r}"
        return
    t.first_s, t.total_s = r.first_s, r.end_s


async def _wyoming(sock: Path, text: str, t: Timing) -> None:
    r = await wyoming_synthesize(sock, text)
    t.first_s, t.error = r.first_s, r.error
    t.total_s = r.end_s if r.stopped else None


async def run(sock_dir: Path, chars: int) -> list[Timing]:
    text = long_text(chars)
    longs = [Timing(f"long {i + 1} ({len(text)} chars)") for i in range(LONG_REQUESTS)]
    short = Timing(f"sentence ({len(SENTENCE)} chars)")
    tasks = []
    for t in longs:
        tasks.append(asyncio.create_task(_http(sock_dir / "http.sock", text, t)))
        await asyncio.sleep(ADMIT_S / LONG_REQUESTS)  # in this order
    await asyncio.sleep(ADMIT_S)
    tasks.append(
        asyncio.create_task(_wyoming(sock_dir / "wyoming.sock", SENTENCE, short))
    )
    await asyncio.gather(*tasks)
    return [*longs, short]


def _s(x: float | None) -> str:
    return f"{x:8.2f}" if x is not None else f"{'-':>8}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bundle", type=Path, required=True, help="voice bundle dir")
    p.add_argument("--backend", choices=("qnn", "cpu"), default="qnn")
    p.add_argument("--chars", type=int, default=LONG_CHARS, help="of each long one")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hvfair") as tmp:
        limits = {"request_timeout_s": CLIENT_TIMEOUT_S}
        daemon, sock_dir = start_daemon(
            Path(tmp), a.bundle.resolve(), a.backend, limits=limits
        )
        try:
            timings = asyncio.run(run(sock_dir, a.chars))
        finally:
            daemon.terminate()
            daemon.wait(60)
    print(f"\n{'request':<26} {'first s':>8} {'end s':>8}")
    for t in timings:
        print(f"{t.name:<26} {_s(t.first_s)} {_s(t.total_s)} {t.error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
