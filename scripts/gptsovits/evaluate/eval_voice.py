"""``scripts/eval-gptsovits LOGS_DIR``: choose the SoVITS epoch of a trained voice.

Resynthesises training clips of logs/<exp>/ from their own semantic tokens with
every SoVITS epoch saved for <exp> (SoVITS_weights_v2Pro*/ beside logs/, CPU
torch) and scores each epoch: breath tonality, whine and log-mel distance to
the recording (metrics.py; lower is better). Prints a table with the
recordings' own levels and a recommended epoch, writes scores.csv and one PNG
per metric into --out. The rule (report.py): drop the epochs whose breath
tonality exceeds the best by more than 3, then those whose whine exceeds the
best of the rest by more than 3 dB; of the rest, the lowest log-mel distance.

Exit codes: 0 every epoch evaluated; 1 nothing to evaluate (missing folder or
files, no epoch, no epoch that loads and fits the clips); 2 bad arguments;
3 some epochs failed (each named on stderr: unreadable checkpoint, or clips
that do not fit it), the others are in the table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# The reference port's default: enough clips to average the breath windows of
# a voice, few enough for minutes per epoch on a CPU.
DEFAULT_CLIPS = 24
DEFAULT_OUT = "eval_voice"  # under LOGS_DIR
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_PARTIAL = 0, 1, 2, 3


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="scripts/eval-gptsovits",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("logs", type=Path, help="training folder logs/<exp>")
    p.add_argument(
        "--clips",
        type=int,
        default=DEFAULT_CLIPS,
        help=f"clips to resynthesise, with breaths first (default {DEFAULT_CLIPS})",
    )
    p.add_argument(
        "--out", type=Path, help=f"scores.csv and plots (default LOGS/{DEFAULT_OUT})"
    )
    p.add_argument("--seed", type=int, default=0, help="noise seed of the first clip")
    a = p.parse_args(argv)
    if a.clips < 1:
        p.error("--clips must be at least 1")
    out = a.out or a.logs / DEFAULT_OUT
    # torch, librosa and the models load only now: --help and argument errors
    # answer at once.
    from scripts.gptsovits.evaluate.epochs import EpochError
    from scripts.gptsovits.evaluate.plots import plot_metrics
    from scripts.gptsovits.evaluate.report import explain, table, write_csv
    from scripts.gptsovits.evaluate.run import evaluate
    from scripts.gptsovits.pipeline.sources import TrainingFolderError

    try:
        result = evaluate(a.logs, a.clips, a.seed)
    except (TrainingFolderError, EpochError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    best = result.best
    print(table(result.recording, result.epochs, best))
    if best is None:
        print(
            f"error: no epoch could be evaluated ({len(result.failed)} failed)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    print(f"recommended epoch: {best.label}")
    print(
        f"  ({explain(result.epochs)}; rule: scripts/gptsovits/evaluate/report.py;"
        " listen before choosing)"
    )
    written = [write_csv(out / "scores.csv", [result.recording, *result.epochs])]
    written += plot_metrics(out, result.recording, result.epochs, best)
    for path in written:
        print(f"wrote {path}")
    if result.failed:
        print(f"error: {len(result.failed)} epoch(s) failed:", file=sys.stderr)
        for message in result.failed:
            print(f"  {message}", file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
