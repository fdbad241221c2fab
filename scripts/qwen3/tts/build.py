"""Qwen3-TTS 12 Hz Hugging Face directory -> static NPU graphs -> verified bundle.

    scripts/build-qwen3-tts MODEL_DIR [--codec DIR] --target qcs8550|simulator \\
        --out DIR [--prefill-buckets 64,256] [--kv-buckets 1024] \\
        [--codec-windows 40,100,325] [--first-frames 8] [--xvector-seconds 3,5,8,10] \\
        [--no-onnx] [--cp-weights fp16|w8a16]

Steps (each skipped when its inputs, options and code are unchanged; state in
<work>/state.json): the codec windows' left contexts from the decoder's
receptive field, the schedule measured against upstream's decode (windows:
first, minutes before the export), export the graphs to ONNX (text projection,
talker prefill per prompt bucket, talker step per KV bucket, code-predictor
step, codec per window, speaker encoder per clip bucket for Base; fp32 for the
CPU backend, fp16 K/V for the NPU), CPU parity gates against upstream's torch
modules, CPU tables (embeddings, mel basis, tokenizer) and params, optionally
the w8a16 code predictor, compile each graph for the target (one graph per
binary), simulator gates on the binaries (default for --target simulator;
--sim-gates for qcs8550), then the bundle directory + .tar, verified as
`hexvoice bundle verify` does. A failed gate stops the run naming graph, metric
and threshold.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from scripts.common.qnn_compile import TARGETS, CompileError
from scripts.common.steps import BuildReport
from scripts.qwen3.common import cli
from scripts.qwen3.tts.pipeline import report
from scripts.qwen3.tts.pipeline.gating import GateError
from scripts.qwen3.tts.pipeline.graph import BuildError, run_steps
from scripts.qwen3.tts.pipeline.options import (
    CODEC_WINDOWS,
    CP_WEIGHTS,
    FIRST_FRAMES,
    KV_BUCKETS,
    PREFILL_BUCKETS,
    XVECTOR_SECONDS,
    BuildOptions,
)
from scripts.qwen3.tts.pipeline.prompt import PromptError
from scripts.qwen3.tts.pipeline.source import ModelDirError
from scripts.qwen3.tts.windows import Window, parse_windows

log = logging.getLogger(__name__)

__all__ = ["BuildOptions", "build", "main", "parser"]


def build(opts: BuildOptions) -> BuildReport:
    opts.validate()
    return run_steps(opts)


_sizes = cli.comma_list(int, "sizes", "64 or 64,256")


_seconds = cli.comma_list(float, "seconds", "3,5,10")


def _windows(text: str) -> tuple[Window, ...]:
    try:
        return parse_windows(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="scripts/build-qwen3-tts", description=__doc__.split("\n")[0]
    )
    p.add_argument("model", type=Path, help="Hugging Face model directory")
    p.add_argument("--codec", type=Path,
                   help="12 Hz codec dir (default MODEL/speech_tokenizer)")  # fmt: skip
    p.add_argument("--target", choices=sorted(TARGETS), required=True)
    p.add_argument("--out", type=Path, required=True, help="bundle directory")
    p.add_argument("--prefill-buckets", type=_sizes, default=PREFILL_BUCKETS,
                   help="prompt-length buckets (default 64,256)")  # fmt: skip
    p.add_argument("--kv-buckets", type=_sizes, default=KV_BUCKETS,
                   help="talker KV-cache buckets (default 1024)")  # fmt: skip
    p.add_argument("--codec-windows", type=_windows, default=CODEC_WINDOWS,
                   help="codec graphs as FRAMES[:CONTEXT],... (default 40,100,325; "
                        "a context not given comes from the codec's receptive "
                        "field)")  # fmt: skip
    p.add_argument("--first-frames", type=int, default=FIRST_FRAMES,
                   help="frames before the first audio (default 8)")  # fmt: skip
    p.add_argument("--xvector-seconds", type=_seconds, default=XVECTOR_SECONDS,
                   help="Base: reference clip buckets, the largest the longest clip "
                        "taken whole (default 3,5,8,10)")  # fmt: skip
    p.add_argument("--cp-weights", choices=CP_WEIGHTS, default="fp16",
                   help="code-predictor weights on the NPU (opt-in w8a16)")  # fmt: skip
    p.add_argument("--upstream-codec", action="store_true",
                   help="also bundle codec_325 (upstream 300+25 chunks)")  # fmt: skip
    cli.add_output_args(p)
    p.add_argument("--no-sim-codec", dest="sim_codec", action="store_false",
                   help="skip the codec's simulator gate (slow)")  # fmt: skip
    p.add_argument("--sim-codec-windows", type=_sizes,
                   help="codec windows (frames) the simulator gate runs "
                        "(default: every one; seconds per frame)")  # fmt: skip
    cli.add_no_onnx(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    opts = BuildOptions(
        model=a.model, target=a.target, out=a.out, codec=a.codec,
        prefill_buckets=a.prefill_buckets, kv_buckets=a.kv_buckets,
        codec_windows=a.codec_windows, first_frames=a.first_frames,
        xvector_seconds=a.xvector_seconds, name=a.name, work=a.work,
        qnn_cache=a.qnn_cache, sim_gates=a.sim_gates, sim_codec=a.sim_codec,
        sim_codec_windows=a.sim_codec_windows,
        onnx=a.onnx,
        cp_weights=a.cp_weights, upstream_codec=a.upstream_codec,
    )  # fmt: skip
    errors = (ModelDirError, PromptError, GateError, CompileError, BuildError,
              ValueError)  # fmt: skip
    return cli.run(build, opts, errors, report.summary)


if __name__ == "__main__":
    sys.exit(main())
