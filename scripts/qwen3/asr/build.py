"""Qwen3-ASR Hugging Face directory -> static NPU graphs -> verified bundle.

    scripts/build-qwen3-asr MODEL_DIR --target qcs8550|simulator --out DIR \\
        [--prefill-buckets 512] [--kv-buckets 1024]

Stages (docs/builds.md; each skipped when its inputs, the results it reads and
its code are unchanged; state in <work>/state.json): export the graphs to ONNX
(encoder window, prefill per prompt bucket, decode step per KV bucket; fp32 for
the CPU backend, fp16 K/V for the NPU), CPU parity gates against upstream's
torch modules, CPU tables (embed_tokens, tokenizer) and params, compile each
graph for the target (one graph per binary; on a weight-sharing target one per
group), simulator gates on the binaries (default for --target simulator;
--sim-gates for qcs8550: the binaries are the same HTP v73 code), then the
bundle directory + .tar, verified as `hexvoice bundle verify` does.  A failed
gate stops the run naming graph, metric and threshold.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from scripts.common.build.stage import Stage
from scripts.common.qnn_compile import TARGETS, CompileError
from scripts.qwen3.asr.pipeline import finish, gating, graphs, tables
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.prompt import PromptError
from scripts.qwen3.asr.pipeline.source import ModelDirError, read_model_dir
from scripts.qwen3.common import cli, table
from scripts.qwen3.common.bundle import BuildError
from scripts.qwen3.common.context import Qwen3Options
from scripts.qwen3.common.stages import (
    Built,
    bundle_stage,
    compile_stages,
    run_build,
    sim_gates_on,
)

#: docs/qwen3.md, graph set: one bucket per role until weight sharing loads (the
#: simulator refuses shared-weights binaries): a
#: 30 s utterance is 390 audio + ~15 text tokens; 1024 rows hold it and the
#: 512-token answer upstream allows
PREFILL_BUCKETS: Final = (512,)
KV_BUCKETS: Final = (1024,)


@dataclass(frozen=True)
class BuildOptions(Qwen3Options):
    prefill_buckets: tuple[int, ...] = PREFILL_BUCKETS
    kv_buckets: tuple[int, ...] = KV_BUCKETS


def _model(ctx: BuildContext) -> dict[str, Any]:
    """What the stages reading the model are keyed by: its files, its buckets."""
    return {"model": ctx.model_files, "buckets": ctx.shape}


def _graphs(ctx: BuildContext) -> dict[str, Any]:
    return {**_model(ctx), "onnx": ctx.onnx_dir, "npu": ctx.npu_dir}


def _binaries(ctx: BuildContext) -> dict[str, Any]:
    return {**_model(ctx), "onnx": ctx.onnx_dir, "bins": ctx.bin_dir}


STAGES: Final = (
    Stage(
        "export",
        graphs.run,
        graphs.Exported,
        inputs=_model,
        outputs=BuildContext.export_outputs,
    ),
    Stage("gates_cpu", gating.cpu_gates, gating.CpuGates, inputs=_graphs),
    Stage(
        "tables",
        tables.run,
        tables.Tables,
        inputs=_model,
        outputs=BuildContext.table_outputs,
    ),
    compile_stages(),
    Stage(
        "gates_sim",
        gating.sim_gates,
        gating.SimGates,
        inputs=_binaries,
        when=sim_gates_on,
    ),
    bundle_stage(finish.run),
)


def build(opts: Qwen3Options) -> Built:
    cli.check_target_and_buckets(opts.target, opts.prefill_buckets, opts.kv_buckets)
    return run_build(STAGES, BuildContext(opts, read_model_dir(opts.model)))


_sizes = cli.comma_list(int, "sizes", "512 or 256,512")
#: the failures the command line reports as one ``error:`` line
ERRORS: Final = (
    ModelDirError,
    PromptError,
    gating.GateError,
    CompileError,
    BuildError,
    ValueError,
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="scripts/build-qwen3-asr", description=__doc__.split("\n")[0]
    )
    p.add_argument("model", type=Path, help="Hugging Face model directory")
    p.add_argument("--target", choices=sorted(TARGETS), required=True)
    p.add_argument("--out", type=Path, required=True, help="bundle directory")
    p.add_argument(
        "--prefill-buckets",
        type=_sizes,
        default=PREFILL_BUCKETS,
        help="prompt-length buckets (default 512)",
    )
    p.add_argument(
        "--kv-buckets",
        type=_sizes,
        default=KV_BUCKETS,
        help="KV-cache buckets (default 1024)",
    )
    cli.add_output_args(p)
    cli.add_no_onnx(p)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    return cli.command(build, cli.options(BuildOptions, a), ERRORS, table.run_rows)


if __name__ == "__main__":
    sys.exit(main())
