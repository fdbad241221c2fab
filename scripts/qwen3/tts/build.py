"""Qwen3-TTS 12 Hz Hugging Face directory -> static NPU graphs -> verified bundle.

    scripts/build-qwen3-tts MODEL_DIR [--codec DIR] --target qcs8550|simulator \\
        --out DIR [--prefill-buckets 64,256] [--kv-buckets 1024] \\
        [--codec-windows 40,100,325] [--first-frames 8] [--xvector-seconds 3,5,8,10] \\
        [--no-onnx] [--cp-weights fp16|w8a16]

Stages (docs/builds.md; each skipped when its inputs, the results it reads and
its code are unchanged; state in <work>/state.json): the codec windows' left
contexts from the decoder's receptive field, the schedule measured against
upstream's decode (windows: first, minutes before the export), export the
graphs to ONNX (text projection, talker prefill per prompt bucket, talker step
per KV bucket, code-predictor step, codec per window, speaker encoder per clip
bucket for Base; fp32 for the CPU backend, fp16 K/V for the NPU), CPU parity
gates against upstream's torch modules, CPU tables (embeddings, mel basis,
tokenizer) and params, optionally the w8a16 code predictor, compile each graph
for the target (one graph per binary; on a weight-sharing target one per
group), simulator gates on the binaries (default for --target simulator;
--sim-gates for qcs8550), then the bundle directory + .tar, verified as
`hexvoice bundle verify` does.  A failed gate stops the run naming graph,
metric and threshold.  Each stage's work is its own module in stages/.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from scripts.common.build.run import StageRun
from scripts.common.build.stage import Stage
from scripts.common.qnn_compile import TARGETS, CompileError
from scripts.qwen3.common import cli, stages, table
from scripts.qwen3.common.bundle import BuildError
from scripts.qwen3.common.stages import (
    Built,
    bundle_stage,
    compile_stages,
    run_build,
    sim_gates_on,
)
from scripts.qwen3.tts.pipeline.context import BuildContext, one_thread_if_tiny
from scripts.qwen3.tts.pipeline.options import (
    CP_WEIGHTS,
    TtsOptions,
    Window,
    parse_windows,
)
from scripts.qwen3.tts.pipeline.prompt import PromptError
from scripts.qwen3.tts.pipeline.source import ModelDirError, read_model_dir
from scripts.qwen3.tts.stages import (
    bundle,
    export,
    gates_cpu,
    gates_sim,
    quant,
    schedule,
    tables,
)
from scripts.qwen3.tts.stages.gating import GateError

#: docs/qwen3.md, graph set: one bucket per role until weight sharing lands (each copies
#: the talker's 0.88 GB): 64 rows hold a sentence's non-streaming prompt, 256 a
#: paragraph's; 1024 KV rows are ~80 s of audio at 12.5 frames/s
PREFILL_BUCKETS: Final = (64, 256)
KV_BUCKETS: Final = (1024,)


@dataclass(frozen=True)
class BuildOptions(TtsOptions):
    prefill_buckets: tuple[int, ...] = PREFILL_BUCKETS
    kv_buckets: tuple[int, ...] = KV_BUCKETS


STAGES: Final = (
    Stage("windows", schedule.run, schedule.Windows, inputs=schedule.inputs),
    Stage(
        "export",
        export.run,
        export.Exported,
        inputs=BuildContext.keyed,
        outputs=BuildContext.export_outputs,
    ),
    Stage("gates_cpu", gates_cpu.run, gates_cpu.CpuGates, inputs=gates_cpu.inputs),
    Stage(
        "tables",
        tables.run,
        tables.Tables,
        inputs=BuildContext.keyed,
        outputs=BuildContext.table_outputs,
        after=("windows",),
    ),
    Stage(
        quant.NAME,
        quant.run,
        quant.Quantized,
        quant.inputs,
        quant.outputs,
        when=quant.on,
    ),
    compile_stages(),
    Stage(
        "gates_sim",
        gates_sim.run,
        gates_sim.SimGates,
        inputs=gates_sim.inputs,
        when=sim_gates_on,
    ),
    bundle_stage(bundle.run),
)


def check(opts: TtsOptions) -> None:
    """ValueError naming the flag when an option is wrong (before any work)."""
    cli.check_target_and_buckets(opts.target, opts.prefill_buckets, opts.kv_buckets)
    if not opts.codec_windows:
        raise ValueError("--codec-windows: expected at least one window")
    largest = max(w.frames for w in opts.codec_windows)
    if not 1 <= opts.first_frames <= largest:
        raise ValueError(
            f"--first-frames: expected 1..{largest} (the largest codec window), "
            f"found {opts.first_frames}"
        )
    seconds = opts.xvector_seconds
    if not seconds or min(seconds) <= 0:
        raise ValueError(
            f"--xvector-seconds: expected positive seconds, found {seconds}"
        )
    if opts.cp_weights not in CP_WEIGHTS:
        raise ValueError(f"--cp-weights must be one of {CP_WEIGHTS}")
    unknown = set(opts.sim_codec_windows or ()) - set(opts.codec_frames)
    if unknown or opts.sim_codec_windows == ():
        raise ValueError(
            "--sim-codec-windows: expected frames of the codec graphs "
            f"{list(opts.codec_frames)}, found {list(opts.sim_codec_windows or ())}"
        )


def build(opts: TtsOptions) -> Built:
    check(opts)
    src = read_model_dir(opts.model, opts.codec)
    with one_thread_if_tiny(src):
        return run_build(STAGES, BuildContext(opts, src))


def cached_build(
    model_dir: Path, root: Path, opts: TtsOptions
) -> tuple[Path, Built | None]:
    """(bundle dir, what the build made, or None when the cache had it): the
    bundle of ``opts`` over ``model_dir``, built once per content key under
    ``root`` (tests, demos, benchmarks; scripts/qwen3/common/stages.py): the
    model and codec files, the code this declaration can run, the options,
    the onnxruntime / QNN versions."""
    files = read_model_dir(model_dir, opts.codec).all_files
    return stages.cached_build(build, files, model_dir, root, opts)


# --- the command line ----------------------------------------------------------
#: short names of the gates' metrics: the shared ones (scripts/qwen3/common/
#: table.py), then the codec's SNR in upstream's chunking before the plain one
#: (the more specific first), a codec window's fp16 range share and its
#: simulator SNR (graphs/codec_sim.py)
SHORT: Final = (
    *table.SHORT,
    ("SNR dB vs float64 decode", "SNRup", ".1f"),
    ("SNR dB", "SNR", ".1f"),
    ("fp16 range share", "fp16", ".2g"),
    ("simulator SNR dB", "simSNR", ".1f"),
)


def graphs(run: StageRun) -> list[tuple[str, ...]]:
    return table.run_rows(run, SHORT)


def notes(run: StageRun) -> list[str]:
    """The codec schedule measured and the CPU tables' dtype."""
    lines = ["", schedule.line(run.results["windows"].schedule)]
    return [*lines, f"cpu tables: {run.results['tables'].embedding_dtype}"]


_sizes = cli.comma_list(int, "sizes", "64 or 64,256")
_seconds = cli.comma_list(float, "seconds", "3,5,10")
#: the failures the command line reports as one ``error:`` line
ERRORS: Final = (
    ModelDirError,
    PromptError,
    GateError,
    CompileError,
    BuildError,
    ValueError,
)


def _windows(text: str) -> tuple[Window, ...]:
    try:
        return parse_windows(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="scripts/build-qwen3-tts", description=__doc__.split("\n")[0]
    )
    add = p.add_argument
    add("model", type=Path, help="Hugging Face model directory")
    add("--codec", type=Path, help="12 Hz codec dir (default MODEL/speech_tokenizer)")
    add("--target", choices=sorted(TARGETS), required=True)
    add("--out", type=Path, required=True, help="bundle directory")
    add(
        "--prefill-buckets",
        type=_sizes,
        default=PREFILL_BUCKETS,
        help="prompt-length buckets (default 64,256)",
    )
    add(
        "--kv-buckets",
        type=_sizes,
        default=KV_BUCKETS,
        help="talker KV-cache buckets (default 1024)",
    )
    add(
        "--codec-windows",
        type=_windows,
        default=BuildOptions.codec_windows,
        help="codec graphs as FRAMES[:CONTEXT],... (default 40,100,325; a context "
        "not given comes from the codec's receptive field)",
    )
    add(
        "--first-frames",
        type=int,
        default=BuildOptions.first_frames,
        help="frames before the first audio (default 8)",
    )
    add(
        "--xvector-seconds",
        type=_seconds,
        default=BuildOptions.xvector_seconds,
        help="Base: reference clip buckets, the largest the longest clip taken "
        "whole (default 3,5,8,10)",
    )
    add(
        "--cp-weights",
        choices=CP_WEIGHTS,
        default="fp16",
        help="code-predictor weights on the NPU (opt-in w8a16)",
    )
    add(
        "--upstream-codec",
        action="store_true",
        help="also bundle codec_325 (upstream 300+25 chunks)",
    )
    cli.add_output_args(p)
    add(
        "--no-sim-codec",
        dest="sim_codec",
        action="store_false",
        help="skip the codec's simulator gate (slow)",
    )
    add(
        "--sim-codec-windows",
        type=_sizes,
        help="codec windows (frames) the simulator gate runs (default: every "
        "one; seconds per frame)",
    )
    cli.add_no_onnx(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    opts = cli.options(BuildOptions, a)
    return cli.command(build, opts, ERRORS, graphs, notes)


if __name__ == "__main__":
    sys.exit(main())
