"""``hexvoice transcribe FILE``: speech to text, through the service or in-process.

Through the running service, the file goes to its OpenAI-compatible HTTP
socket (``POST /v1/audio/transcriptions``; ``--socket``: a Unix socket path, or
an ``http://HOST:PORT`` URL for a ``tcp_http`` listener), which answers in the
format asked for.  With ``--bundle DIR`` the bundle's ASR engine runs in this
process instead (in_process.py), with the same checks and the same
output.  ``--language`` takes a code or upstream's name in any case;
``--max-new-tokens`` caps each segment's decode (the engine refuses more than
its bundle's bound).  The transcript goes to standard output (or ``-o
FILE``).  Exit codes: 0 done, 1 refused or failed (the reason on standard
error), 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from daemon.cli.errors import CommandError
from daemon.cli.http_client import DEFAULT_SOCKET, call
from daemon.protocols.openai.transcripts import RESPONSE_FORMATS

#: The service answers a queued request within its request timeout (120 s by
#: default); a long file transcribes for longer than it plays on a slow board.
READ_TIMEOUT_S: Final = 3600.0
#: The one status of a transcript (transcriptions.py answers 200 or an error).
OK: Final = 200
DEFAULT_FORMAT: Final = "text"
#: The model id that selects the service's default ASR model.
DEFAULT_MODEL: Final = "hexvoice"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        stdin = str(args.file) == "-"
        data = sys.stdin.buffer.read() if stdin else args.file.read_bytes()
        if args.bundle is not None:
            from daemon.cli.transcribe import in_process

            text = in_process.transcribe(data, args)
        else:
            text = asyncio.run(_via_service(data, args))
    except (OSError, CommandError) as exc:
        print(f"hexvoice transcribe: {exc}", file=sys.stderr)
        return 1
    if text and not text.endswith("\n"):  # json: one line, as a terminal wants
        text += "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
    return 0


def positive_int(text: str) -> int:
    """``--max-new-tokens``: an integer >= 1 (argparse words the refusal)."""
    if not text.strip().isascii() or not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}")
    return int(text)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hexvoice transcribe",
        description="Speech in an audio FILE to text, through the service or "
        "in-process (--bundle).",
    )
    p.add_argument(
        "file", type=Path, help="audio file (WAV, FLAC, OGG, MP3); '-' = stdin"
    )
    p.add_argument(
        "--language",
        help="language spoken: a code (en, zh, en_US) or its name in any case "
        "(English, chinese); default: the model tells",
    )
    p.add_argument("--prompt", help="text that steers the transcript (names, terms)")
    p.add_argument(
        "--format",
        choices=RESPONSE_FORMATS,
        default=DEFAULT_FORMAT,
        help=f"output format ({DEFAULT_FORMAT})",
    )
    p.add_argument(
        "--max-new-tokens",
        type=positive_int,
        metavar="N",
        help="decode at most N tokens per segment of the audio (default and "
        "most: the model's own bound, e.g. 512 for Qwen3-ASR as upstream)",
    )
    p.add_argument("-o", "--output", default="-", help="output file, '-' = stdout")
    p.add_argument("--model", help="ASR model of the service (default: its default)")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--socket",
        default=DEFAULT_SOCKET,
        help=f"the service's HTTP socket, or http://HOST:PORT ({DEFAULT_SOCKET})",
    )
    where.add_argument("--bundle", type=Path, help="run this ASR bundle in-process")
    p.add_argument(
        "--backend",
        choices=("qnn", "cpu"),
        default="qnn",
        help="with --bundle: qnn (NPU or simulator) or cpu (onnxruntime)",
    )
    return p


async def _via_service(data: bytes, args: argparse.Namespace) -> str:
    import aiohttp

    form = aiohttp.FormData()
    form.add_field("file", data, filename=args.file.name)
    form.add_field("model", args.model or DEFAULT_MODEL)
    form.add_field("response_format", args.format)
    for name in ("language", "prompt", "max_new_tokens"):
        if getattr(args, name) is not None:
            form.add_field(name, str(getattr(args, name)))
    path = "/v1/audio/transcriptions"
    return await call(
        args.socket,
        "POST",
        path,
        form,
        command="transcribe",
        read_timeout=READ_TIMEOUT_S,
        ok=(OK,),
    )
