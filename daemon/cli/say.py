"""``hexvoice say``: in-process with ``--bundle``, else through the running service."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    argv = list(argv)
    if any(a == "--bundle" or a.startswith("--bundle=") for a in argv):
        from daemon.cli import say_local

        return say_local.main(argv)
    from daemon.cli import client

    if any(a in ("-h", "--help") for a in argv):
        # Both ways in one help: the in-process options (--seed, --speed, --rate,
        # --backend) are what a user reaches for, and --bundle selects them.
        from daemon.cli import say_local

        print(client.parser().format_help())
        print(say_local.parser().format_help(), end="")
        return 0
    return client.main(argv)
