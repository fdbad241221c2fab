"""``hexvoice`` command line: one entry point, subcommands implemented elsewhere.

Subcommands import their module lazily so ``hexvoice --help`` stays instant and a
board without the optional extras can still run the parts it has.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Final

#: subcommand → (module with ``main(argv) -> int``, one-line help)
SUBCOMMANDS: Final[dict[str, tuple[str, str]]] = {
    "bundle": ("daemon.cli.bundle", "inspect or verify a voice bundle"),
    "doctor": ("board.doctor", "check this machine / board before serving"),
    "serve": ("daemon.cli.serve.command", "run the service (Wyoming + OpenAI HTTP)"),
    "say": (
        "daemon.cli.say.command",
        "speak TEXT into a WAV (service, or --bundle in-process)",
    ),
    "transcribe": (
        "daemon.cli.transcribe.command",
        "speech in an audio FILE to text (service, or --bundle in-process)",
    ),
    "voice": ("daemon.cli.voice", "add, list or remove the service's cloned voices"),
    "voices": ("daemon.cli.voices", "list the running service's voices"),
}

#: Commands whose output is their answer (OK, a listing): their log says only
#: what went wrong, unless -v; the rest log progress (loading, warm-up) at INFO.
RESULT_COMMANDS: Final = frozenset({"bundle", "voice", "voices"})


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="hexvoice",
        description="On-device TTS and ASR for Qualcomm NPU boards.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("command", choices=sorted(SUBCOMMANDS), help="subcommand")
    parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        print("\nsubcommands:")
        for name, (_, help_) in sorted(SUBCOMMANDS.items()):
            print(f"  {name:<10} {help_}")
        return 0 if argv else 2
    ns = parser.parse_args(argv)
    quiet = ns.command in RESULT_COMMANDS
    logging.basicConfig(
        level=logging.DEBUG
        if ns.verbose
        else logging.WARNING
        if quiet
        else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    module = importlib.import_module(SUBCOMMANDS[ns.command][0])
    return int(module.main(ns.args))


if __name__ == "__main__":
    sys.exit(main())
