"""``hexvoice say TEXT -o out.wav``: through the running service (Wyoming), or
in this process with ``--bundle`` (in_process.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from daemon.cli.errors import CommandError
from daemon.cli.wyoming_client import DEFAULT_SOCKET, synthesize


def main(argv: Sequence[str]) -> int:
    argv = list(argv)
    if any(a == "--bundle" or a.startswith("--bundle=") for a in argv):
        # Imported only now: the service's way needs no engine code.
        from daemon.cli.say import in_process

        return in_process.main(argv)
    if any(a in ("-h", "--help") for a in argv):
        # Both ways in one help: the in-process options (--seed, --speed, --rate,
        # --backend) are what a user reaches for, and --bundle selects them.
        from daemon.cli.say import in_process

        print(parser().format_help())
        print(in_process.parser().format_help(), end="")
        return 0
    return _through_service(argv)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hexvoice say",
        description="Speak TEXT through the running service (Wyoming) into a WAV.",
    )
    p.add_argument("text", help="what to say")
    p.add_argument("-o", "--output", default="out.wav", help="WAV file, '-' = stdout")
    p.add_argument(
        "--socket", default=DEFAULT_SOCKET, help="path or unix:// tcp:// URI"
    )
    p.add_argument("--voice", help="voice name (default: the service's)")
    p.add_argument("--speaker", help="speaker of a multi-speaker voice")
    p.add_argument("--language", help="language to speak (voices that speak several)")
    return p


def _through_service(argv: Sequence[str]) -> int:
    a = parser().parse_args(argv)
    try:
        speech = asyncio.run(
            synthesize(a.socket, a.text, a.voice, a.speaker, a.language)
        )
    except CommandError as exc:
        print(f"hexvoice say: {exc}", file=sys.stderr)
        return 1
    speech.write_wav(a.output)
    if a.output != "-":
        print(
            f"{a.output}: {speech.seconds:.2f} s at {speech.rate} Hz "
            f"(first audio after {speech.first_audio_s * 1000:.0f} ms)",
            file=sys.stderr,
        )
    return 0
