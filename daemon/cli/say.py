"""``hexvoice say``: in-process with ``--bundle``, else through the running service."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    argv = list(argv)
    if any(a == "--bundle" or a.startswith("--bundle=") for a in argv):
        from daemon.cli import say_local

        return say_local.main(argv)
    from daemon.cli import client

    if argv and argv[0] in ("-h", "--help"):
        print(
            "hexvoice say TEXT -o out.wav --bundle DIR [--backend qnn|cpu] [--seed N]"
            "\n    runs the engine in this process (see `hexvoice say --bundle x -h`)\n"
        )
    return client.main(argv)
