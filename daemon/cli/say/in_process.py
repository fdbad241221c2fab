"""``hexvoice say TEXT -o out.wav --bundle DIR``: run an engine in-process.

No daemon involved: the bundle's graphs are opened on the chosen backend, the
engine registered for the bundle's ``engine`` (entry-point group
``hexvoice.engines``) synthesizes, and the audio is streamed into a 16-bit WAV
as it arrives. The file appears only when complete (written beside it, then
renamed), so an error or Ctrl-C never leaves a truncated WAV behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from daemon.sdk.audio.shaping import OUTPUT_RATES, output_resampler, to_int16
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import Cancelled
from daemon.sdk.graphs import BACKENDS
from daemon.sdk.local import open_engine
from daemon.service.edge.refusals import BadRequest
from daemon.service.edge.requests import SynthesisRequest, check


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hexvoice say",
        description="With --bundle: speak TEXT into a WAV file in this process "
        "(no service).",
    )
    parser.add_argument("text", help="text to speak ('-' reads standard input)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="WAV file")
    parser.add_argument("--bundle", type=Path, required=True, help="voice bundle")
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="qnn",
        help="qnn: the context binaries (the x86 HTP simulator off a board); cpu: "
        "the ONNX graphs on onnxruntime CPU (default: qnn)",
    )
    parser.add_argument("--seed", type=int, help="noise seed (default: random)")
    parser.add_argument("--speed", type=float, default=1.0, help="speaking rate")
    parser.add_argument(
        "--rate", type=int, choices=OUTPUT_RATES, help="output Hz (default: voice's)"
    )
    parser.add_argument(
        "--accept-license",
        action="append",
        default=[],
        metavar="ID",
        help="accept a licence the voice's engine runs under (repeatable)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    text = sys.stdin.read() if args.text == "-" else args.text
    request = SynthesisRequest(text, seed=args.seed, speed=args.speed)
    try:
        seconds, first, wall = _say(request, args)
    except (
        BundleError,
        BadRequest,
        LookupError,
        ValueError,
        OSError,
        Cancelled,
    ) as exc:
        print(f"hexvoice say: error: {exc}", file=sys.stderr)
        return 1
    print(
        f"{args.output}: {seconds:.2f} s of audio; first audio after {first:.2f} s, "
        f"done in {wall:.2f} s (RTF {wall / max(seconds, 1e-9):.2f})",
        file=sys.stderr,
    )
    return 0


def _say(
    request: SynthesisRequest, args: argparse.Namespace
) -> tuple[float, float, float]:
    import soundfile

    partial = args.output.with_name(f".{args.output.name}.partial")
    with open_engine(
        args.bundle, args.backend, verify=True, accept_licenses=args.accept_license
    ) as (engine, _):
        # The one request check, as the service makes it (BadRequest).
        check(request, engine.capabilities())
        assert request.text is not None
        text, options = request.text, request.options(None)
        rate = args.rate or engine.sample_rate
        resample = output_resampler(engine.sample_rate, rate)
        start = time.perf_counter()
        first = None
        samples = 0
        try:
            with soundfile.SoundFile(
                partial, "w", rate, 1, "PCM_16", format="WAV"
            ) as wav:
                for chunk in engine.synthesize(text, options):
                    if first is None:
                        first = time.perf_counter() - start
                    out = resample.push(chunk.audio)
                    wav.buffer_write(to_int16(out), dtype="int16")
                    samples += len(out)
                tail = resample.push(np.zeros(0, np.float32), last=True)
                wav.buffer_write(to_int16(tail), dtype="int16")
                samples += len(tail)
            os.replace(partial, args.output)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        wall = time.perf_counter() - start
    return samples / rate, first or 0.0, wall


if __name__ == "__main__":
    sys.exit(main())
