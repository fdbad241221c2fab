"""Board latency model report (ESTIMATE): every engine's graphs, priced.

    python -m scripts.bench.latency_model [--work DIR] [--engines piper,...]

Full-size graphs are exported once into ``--work`` and counted
(engines.py), priced by the roofline fitted to the reference port's timings
(calibrate.py), and summed over each engine's call schedule (schedule.py).
Everything it prints is an estimate: the fit's own leave-one-out error is
printed with it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from scripts.bench.latency_model import report

DEFAULT_WORK = Path("/tmp/hexvoice-board-model")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--work",
        type=Path,
        default=DEFAULT_WORK,
        help="where full-size graphs are exported and counted (cached)",
    )
    ap.add_argument(
        "--engines",
        default="piper,gpt-sovits,qwen3-asr,qwen3-tts",
        help="comma-separated engines to predict (default: all)",
    )
    ap.add_argument(
        "--recount",
        action="store_true",
        help="recount the port graphs from the GSV export, compare",
    )
    ap.add_argument("--out", type=Path, help="also write the report here (markdown)")
    args = ap.parse_args(argv)
    names = [n for n in args.engines.split(",") if n]
    text = report.full_report(args.work, names, args.recount)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
