"""``hexvoice voices``: list the voices the running service offers."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence

from daemon.cli.errors import CommandError
from daemon.cli.wyoming_client import DEFAULT_SOCKET, describe


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="hexvoice voices",
        description="List the voices the running service offers (over Wyoming).",
    )
    p.add_argument(
        "--socket", default=DEFAULT_SOCKET, help="path or unix:// tcp:// URI"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    a = p.parse_args(argv)
    try:
        info = asyncio.run(describe(a.socket))
    except CommandError as exc:
        print(f"hexvoice voices: {exc}", file=sys.stderr)
        return 1
    voices = [v for program in info.tts for v in program.voices]
    if a.json:
        print(json.dumps([v.to_dict() for v in voices], indent=2))
        return 0
    for v in voices:
        speakers = (
            f"  speakers: {', '.join(s.name for s in v.speakers)}" if v.speakers else ""
        )
        print(
            f"{v.name:<24} {','.join(v.languages):<12} {v.description or ''}{speakers}"
        )
    return 0
