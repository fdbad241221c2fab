"""build_tts_qwen3's step graph: which steps run, in what order, keyed by what.

    windows -> export -> gates_cpu -> tables [-> quant cp_step] -> compile <key>...
            [-> gates_sim] -> bundle

(windows first: a window whose context cannot be found stops the build before
the export, minutes at full size)

Each step's key holds its own code's hash (pipeline/code.py), the model files
it reads and the options it depends on, so a gate change reruns the gates only
and a fully resumed run loads no model.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scripts.common.steps import BuildReport, Steps, hash_path
from scripts.qwen3.common import bundle
from scripts.qwen3.common.bundle import BuildError
from scripts.qwen3.common.compiling import compile_steps
from scripts.qwen3.tts.pipeline import code, finish, gating, quant, tables
from scripts.qwen3.tts.pipeline.context import BuildContext, xvector_frames
from scripts.qwen3.tts.pipeline.source import SAMPLE_RATE, read_model_dir

if TYPE_CHECKING:
    from scripts.qwen3.tts.pipeline.options import BuildOptions

__all__ = ["BuildError", "context", "run_steps"]

log = logging.getLogger(__name__)


def context(opts: BuildOptions) -> BuildContext:
    """The checked directories and the work layout of ``opts``."""
    src = read_model_dir(opts.model, opts.codec)
    work = Path(opts.work or opts.out.with_name(opts.out.name + ".work"))
    buckets = sorted({xvector_frames(s, SAMPLE_RATE) for s in opts.xvector_seconds})
    return BuildContext(
        src,
        work,
        tuple(sorted(set(opts.prefill_buckets))),
        tuple(sorted(set(opts.kv_buckets))),
        opts.codec_frames,
        tuple(buckets),
    )


def run_steps(opts: BuildOptions) -> BuildReport:
    from scripts.qwen3.tts.upstream import torch_threads

    ctx = context(opts)
    if not tables.tiny(ctx.src):
        return _run(opts, ctx)
    # a tiny model's ops take microseconds: one thread beats a contended pool
    # (export 20 s vs 97 s on the shared 2-core box)
    with torch_threads(1):
        return _run(opts, ctx)


def _run(opts: BuildOptions, ctx: BuildContext) -> BuildReport:
    keys = ctx.graph_keys()
    quantized = opts.cp_weights == "w8a16"
    total = 5 + int(quantized) + len(keys) + int(opts.run_sim_gates)
    steps = Steps(ctx.work, total, "")
    sources = code.hashes()
    src = ctx.src
    log.info("hashing %d model files in %s", len(src.all_files), src.root)
    model = {f"model/{p.name}": hash_path(p) for p in src.files}
    model |= {f"codec/{p.name}": hash_path(p) for p in src.codec_files}
    shape = {
        "prefill": list(ctx.prefill_buckets),
        "kv": list(ctx.kv_buckets),
        "codec": list(ctx.codec_frames),
        "xvector": list(ctx.xvector_buckets),
    }
    res: dict[str, Any] = {}
    asked = [[w.frames, w.context] for w in opts.codec_windows]
    res["windows"] = steps.run(
        "windows",
        {"code": sources["windows"], "model": model, "windows": asked,
         "first_frames": opts.first_frames},  # fmt: skip
        [],
        lambda: gating.windows(ctx, opts.codec_windows, opts.first_frames),
    )
    res["export"] = steps.run(
        "export",
        {"code": sources["export"], "model": model, "shape": shape},
        ctx.export_outputs(),
        ctx.export,
    )
    res["gates_cpu"] = steps.run(
        "gates_cpu",
        {"code": sources["gates"], "model": model, "onnx": ctx.onnx_dir,
         "npu": ctx.npu_dir, "gate": ctx.gate_dir, "shape": shape},  # fmt: skip
        [],
        lambda: gating.cpu_gates(ctx),
    )
    res["tables"] = steps.run(
        "tables",
        {"code": sources["tables"], "model": model, "shape": shape,
         "codec": res["windows"]["codec"]},  # fmt: skip
        ctx.table_outputs(),
        lambda: ctx.write_tables(res["windows"]["codec"]),
    )
    npu = {k: ctx.npu_onnx(k) for k in keys}
    if quantized:
        res["quant"] = steps.run(
            "quant cp_step",
            {"code": sources["quant"], "model": model, "onnx": npu["cp_step"]},
            [ctx.quant_path()],
            lambda: quant.quantize(ctx),
        )
        npu["cp_step"] = ctx.quant_path()
    compiled = compile_steps(steps, ctx, npu, sources["compile"], opts.target,
                             opts.qnn_cache, opts.run_sim_gates)  # fmt: skip
    res["compile"] = compiled
    if opts.run_sim_gates:
        res["gates_sim"] = steps.run(
            "gates_sim",
            {"code": sources["gates"], "model": model, "bins": ctx.bin_dir,
             "onnx": ctx.onnx_dir, "shape": shape, "cp_weights": opts.cp_weights,
             "codec": list(opts.sim_codec_frames),
             "params": res["tables"]["params"]},  # fmt: skip
            [],
            lambda: gating.sim_gates(ctx, res["tables"]["params"], quantized,
                                     opts.sim_codec_frames),  # fmt: skip
        )
    name = opts.name or src.root.name
    tar = opts.out.with_name(opts.out.name + ".tar")
    res["bundle"] = steps.run(
        "bundle",
        {"code": sources["bundle"], "stage": ctx.stage, "bins": ctx.bin_dir,
         "onnx": ctx.onnx_dir, "compile": compiled, "tables": res["tables"],
         "name": name, "target": opts.target, "with_onnx": opts.onnx,
         "out": str(opts.out)},  # fmt: skip
        [opts.out / "voice.yaml", tar],
        lambda: _bundle(ctx, opts, res, name, tar),
    )
    return BuildReport(opts.out, tar, res, steps.ran, steps.skipped)


def _bundle(
    ctx: BuildContext, opts: BuildOptions, res: dict, name: str, tar: Path
) -> dict:
    return bundle.checked(*finish.write_bundle(
        ctx, opts.out, tar, name, opts.target, res, opts.onnx
    ))  # fmt: skip
