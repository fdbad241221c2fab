"""Qwen3-ASR Hugging Face directory -> static NPU graphs -> verified bundle.

    scripts/build-qwen3-asr MODEL_DIR --target qcs8550|simulator --out DIR \\
        [--prefill-buckets 512] [--kv-buckets 1024]

Steps (each skipped when its inputs, options and code are unchanged; state in
<work>/state.json): export the graphs to ONNX (encoder window, prefill per
prompt bucket, decode step per KV bucket; fp32 for the CPU backend, fp16 K/V
for the NPU), CPU parity gates against upstream's torch modules, CPU tables
(embed_tokens, tokenizer) and params, compile each graph for the target (one
graph per binary), simulator gates on the binaries (default for --target
simulator; --sim-gates for qcs8550: the binaries are the same HTP v73 code),
then the bundle directory + .tar, verified as `hexvoice bundle verify` does.
A failed gate stops the run naming graph, metric and threshold.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from scripts.common.qnn_compile import TARGETS, CompileError
from scripts.common.steps import BuildReport, Steps, hash_path
from scripts.qwen3.asr.pipeline import code, finish, gating, report
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.prompt import PromptError
from scripts.qwen3.asr.pipeline.source import ModelDirError, read_model_dir
from scripts.qwen3.common import bundle, cli
from scripts.qwen3.common.bundle import BuildError
from scripts.qwen3.common.compiling import compile_steps

log = logging.getLogger(__name__)

#: docs/qwen3.md, graph set: one bucket per role until weight sharing loads (the
#: simulator refuses shared-weights binaries): a
#: 30 s utterance is 390 audio + ~15 text tokens; 1024 rows hold it and the
#: 512-token answer upstream allows
PREFILL_BUCKETS: Final = (512,)
KV_BUCKETS: Final = (1024,)


@dataclass(frozen=True)
class BuildOptions:
    model: Path
    target: str
    out: Path
    prefill_buckets: tuple[int, ...] = PREFILL_BUCKETS
    kv_buckets: tuple[int, ...] = KV_BUCKETS
    name: str | None = None
    work: Path | None = None
    qnn_cache: Path | None = None
    #: None: on for --target simulator, off for a board target
    sim_gates: bool | None = None
    #: the fp32 graphs in onnx/ for the CPU backend (at full size ~2.4 GB each:
    #: a board bundle can leave them out)
    onnx: bool = True

    def validate(self) -> None:
        cli.check_target_and_buckets(
            self.target, self.prefill_buckets, self.kv_buckets
        )

    @property
    def run_sim_gates(self) -> bool:
        return cli.sim_gates_on(self.target, self.sim_gates)


def build(opts: BuildOptions) -> BuildReport:
    opts.validate()
    src = read_model_dir(opts.model)
    work = Path(opts.work or opts.out.with_name(opts.out.name + ".work"))
    prefill = tuple(sorted(set(opts.prefill_buckets)))
    kv = tuple(sorted(set(opts.kv_buckets)))
    ctx = BuildContext(src, work, prefill, kv)
    keys = ctx.graph_keys()
    total = 4 + len(keys) + (1 if opts.run_sim_gates else 0)
    # each step's inputs hold its own code's hash (pipeline/code.py)
    steps = Steps(work, total, "")
    sources = code.hashes()
    log.info("hashing %d model files in %s", len(src.files), src.root)
    model = {p.name: hash_path(p) for p in src.files}
    buckets = {"prefill": list(prefill), "kv": list(kv)}
    res: dict[str, dict] = {}

    res["export"] = steps.run(
        "export",
        {"code": sources["export"], "model": model, "buckets": buckets},
        ctx.export_outputs(),
        ctx.export,
    )
    res["gates_cpu"] = steps.run(
        "gates_cpu",
        {
            "code": sources["gates"],
            "model": model,
            "onnx": ctx.onnx_dir,
            "npu": ctx.npu_dir,
            "buckets": buckets,
        },
        [],
        lambda: gating.cpu_gates(ctx),
    )
    res["tables"] = steps.run(
        "tables",
        {"code": sources["tables"], "model": model, "buckets": buckets},
        ctx.table_outputs(),
        ctx.write_tables,
    )
    compiled = compile_steps(
        steps, ctx, {k: ctx.npu_onnx(k) for k in keys}, sources["compile"],
        opts.target, opts.qnn_cache, opts.run_sim_gates,
    )  # fmt: skip
    res["compile"] = compiled
    if opts.run_sim_gates:
        res["gates_sim"] = steps.run(
            "gates_sim",
            {
                "code": sources["gates"],
                "model": model,
                "bins": ctx.bin_dir,
                "onnx": ctx.onnx_dir,
                "buckets": buckets,
            },
            [],
            lambda: gating.sim_gates(ctx),
        )
    tar = opts.out.with_name(opts.out.name + ".tar")
    res["bundle"] = steps.run(
        "bundle",
        {
            "code": sources["bundle"],
            "stage": ctx.stage,
            "bins": ctx.bin_dir,
            "onnx": ctx.onnx_dir,
            "compile": compiled,
            "tables": res["tables"],
            "name": opts.name or src.root.name,
            "target": opts.target,
            "with_onnx": opts.onnx,
            "out": str(opts.out),
        },
        [opts.out / "voice.yaml", tar],
        lambda: _bundle(ctx, opts, res, tar),
    )
    return BuildReport(opts.out, tar, res, steps.ran, steps.skipped)


def _bundle(ctx: BuildContext, opts: BuildOptions, res: dict, tar: Path) -> dict:
    return bundle.checked(*finish.write_bundle(
        ctx, opts.out, tar, opts.name or ctx.src.root.name, opts.target, res,
        opts.onnx,
    ))  # fmt: skip


_sizes = cli.comma_list(int, "sizes", "512 or 256,512")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="scripts/build-qwen3-asr", description=__doc__.split("\n")[0]
    )
    p.add_argument("model", type=Path, help="Hugging Face model directory")
    p.add_argument("--target", choices=sorted(TARGETS), required=True)
    p.add_argument("--out", type=Path, required=True, help="bundle directory")
    p.add_argument("--prefill-buckets", type=_sizes, default=PREFILL_BUCKETS,
                   help="prompt-length buckets (default 512)")  # fmt: skip
    p.add_argument("--kv-buckets", type=_sizes, default=KV_BUCKETS,
                   help="KV-cache buckets (default 1024)")  # fmt: skip
    cli.add_output_args(p)
    cli.add_no_onnx(p)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    opts = BuildOptions(
        a.model, a.target, a.out, a.prefill_buckets, a.kv_buckets, a.name, a.work,
        a.qnn_cache, a.sim_gates, a.onnx,
    )  # fmt: skip
    errors = (ModelDirError, PromptError, gating.GateError, CompileError,
              BuildError, ValueError)  # fmt: skip
    return cli.run(build, opts, errors, report.summary)


if __name__ == "__main__":
    sys.exit(main())
