"""``hexvoice voice add|list|rm``: the running service's cloned voices.

Talks to the service's HTTP socket (``/v1/voices``; ``--socket``: a Unix socket
path, or an ``http://HOST:PORT`` URL for a ``tcp_http`` listener):

    hexvoice voice add NAME --clip ref.wav [--text "what the clip says"] [--lang zh]
                           [--aux more.wav ...] [--model VOICE]
                           [--consent "the speaker agreed to ..."]
    hexvoice voice list [--json]
    hexvoice voice rm NAME

``add`` uploads the clip; the service computes the voice on its NPU worker
and stores it, after which ``NAME`` is a voice like any other (``hexvoice
voices``, ``hexvoice say --voice NAME``).  Exit codes: 0 done, 1 refused or
failed (the service's reason on standard error), 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from daemon.cli.errors import CommandError
from daemon.cli.http_client import DEFAULT_SOCKET, call

#: A registration waits in the service's queue like any request (its request
#: timeout, 120 s by default, bounds it there).
READ_TIMEOUT_S: Final = 600.0
#: What the service answers when it did it (201 for a voice added).
OK: Final = range(200, 300)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.action == "add":
            clips = [args.clip.read_bytes(), *(a.read_bytes() for a in args.aux)]
            voice = asyncio.run(_add(args, clips))
            print(f"{voice['name']}: added ({voice['engine']}, {voice['base']})")
        elif args.action == "rm":
            asyncio.run(_call(args.socket, "DELETE", f"/v1/voices/{args.name}"))
            print(f"{args.name}: removed")
        else:
            voices = asyncio.run(_call(args.socket, "GET", "/v1/voices"))["data"]
            _print_list(voices, args.json)
    except (OSError, CommandError) as exc:
        print(f"hexvoice voice {args.action}: {exc}", file=sys.stderr)
        return 1
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hexvoice voice", description="The service's cloned voices."
    )
    sub = p.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="make voice NAME from a clip of someone speaking")
    add.add_argument("name", help="the new voice's name (letters, digits, _ . -)")
    add.add_argument("--clip", type=Path, required=True, help="audio file (WAV, ...)")
    add.add_argument("--text", help="what the clip says (engines that use it)")
    add.add_argument("--lang", help="the clip's language, e.g. zh or en")
    add.add_argument(
        "--aux",
        type=Path,
        action="append",
        default=[],
        help="another clip of the same voice (repeatable; engines that average them)",
    )
    add.add_argument("--model", help="loaded voice or engine to clone with")
    add.add_argument(
        "--consent",
        help="your statement that the clip's speaker agreed to be cloned (stored "
        "with the voice; required by some engines and by voice_store.require_consent)",
    )
    ls = sub.add_parser("list", help="the stored voices")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    rm = sub.add_parser("rm", help="remove voice NAME")
    rm.add_argument("name", help="the cloned voice to remove")
    for s in (add, ls, rm):
        s.add_argument(
            "--socket",
            default=DEFAULT_SOCKET,
            help=f"the service's HTTP socket, or http://HOST:PORT ({DEFAULT_SOCKET})",
        )
    return p


async def _add(args: argparse.Namespace, clips: list[bytes]) -> dict[str, Any]:
    import aiohttp

    form = aiohttp.FormData()
    form.add_field("file", clips[0], filename=args.clip.name)
    for path, data in zip(args.aux, clips[1:], strict=True):
        form.add_field("aux", data, filename=path.name)
    form.add_field("name", args.name)
    given = (
        ("transcript", args.text),
        ("language", args.lang),
        ("model", args.model),
        ("consent", args.consent),
    )
    for field, value in given:
        if value is not None:
            form.add_field(field, value)
    return await _call(args.socket, "POST", "/v1/voices", form)


async def _call(socket: str, method: str, path: str, data: Any = None) -> Any:
    body = await call(
        socket,
        method,
        path,
        data,
        command="voice",
        read_timeout=READ_TIMEOUT_S,
        ok=OK,
    )
    return json.loads(body)


def _print_list(voices: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print(json.dumps(voices, indent=2))
        return
    for v in voices:
        state = "" if v["available"] else f"  (not offered: {v['reason']})"
        if v["available"] and v.get("verified") is False:
            state = "  (unverified: stored without a checksum)"
        langs = ",".join(v["languages"]) or "-"
        via = f"{v['engine']} via {v['base']}" if v["engine"] else "-"
        print(f"{v['name']:<24} {langs:<12} {via}{state}")
