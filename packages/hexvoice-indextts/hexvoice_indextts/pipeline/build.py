"""An IndexTTS-2 model directory -> static NPU graphs -> verified bundle.

    scripts/build-indextts MODEL_DIR --hub HF_HOME/hub --out DIR \\
        --accept-license bilibili-model-use [--target simulator|qcs8550] \\
        [--language auto|en|zh] [--work DIR] [--qnn-cache DIR] [--sim-gates]

Refused before anything runs unless the bilibili Model Use License Agreement
is accepted (exit 78, as other configuration errors).  Stages (each skipped
when its inputs, the results it reads and its code are unchanged; state in
<work>/state.json): export every graph of the buckets to ONNX; the CPU
tables, BPE, glossary and NeMo's compiled grammars; CPU gates of the
per-voice graphs; one compile per binary for the target; simulator gates of
every binary (default for --target simulator); the bundle, verified as
`hexvoice bundle verify` does, with the accepted licence in voice.yaml.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Final

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.license import LicenseNotAccepted
from daemon.sdk.verify import verify_bundle
from scripts.common.build import cache
from scripts.common.build.compile import GROUP, CompilePlan, compile_group
from scripts.common.build.license import (
    EXIT_NOT_ACCEPTED,
    add_accept_license,
    require_accepted,
)
from scripts.common.build.report import summary
from scripts.common.build.run import StageRun, run_stages
from scripts.common.build.stage import Stage
from scripts.common.qnn_compile import CompileError

from hexvoice_indextts.engine.params import LICENSE
from hexvoice_indextts.model_dir import ModelDirError, read_model_dir
from hexvoice_indextts.pipeline import bundle, export, gates
from hexvoice_indextts.pipeline.context import TARGETS, BuildContext, BuildOptions
from hexvoice_indextts.pipeline.gates import GateError


def _plan(ctx: BuildContext) -> CompilePlan:
    return CompilePlan(
        {k: ctx.work.onnx(k) for k in ctx.graph_keys},
        ctx.work.bin_dir,
        ctx.opts.target,
        ctx.opts.qnn_cache,
        gated=ctx.opts.run_sim_gates,
    )


STAGES: Final = (
    Stage("export", export.run, export.Exported, export.inputs, export.outputs),
    Stage("tables", export.run_tables, export.Tables, export.tables_inputs,
          export.tables_outputs),
    Stage("gates_cpu", gates.run_cpu, gates.Gates, gates.cpu_inputs, after=("export",)),
    compile_group(_plan),
    Stage("gates_sim", gates.run_sim, gates.Gates, gates.sim_inputs,
          after=(GROUP, "tables"), when=lambda ctx: ctx.opts.run_sim_gates),
    Stage("bundle", bundle.run, bundle.Bundled, bundle.inputs, bundle.outputs,
          after=(GROUP, "tables")),
)  # fmt: skip


@dataclass(frozen=True)
class Built:
    bundle: Bundle
    run: StageRun
    options: BuildOptions


def build(
    opts: BuildOptions,
    accepted: list[str] | tuple[str, ...],
    log: Callable[[str], None] | None = None,
) -> Built:
    """Build (or resume) the bundle at ``opts.out``: LicenseNotAccepted before
    anything is read unless ``accepted`` holds the agreement's id."""
    terms = require_accepted(LICENSE, accepted)
    opts.validate()
    md = read_model_dir(opts.model)  # a clear refusal before any model loads
    out, work = Path(opts.out), opts.work_dir
    if out.exists() and not bundle.made_here(out, work):
        raise FileExistsError(f"{out} exists; choose a new directory")
    ctx = (
        BuildContext(opts, md, terms)
        if log is None
        else BuildContext(opts, md, terms, log)
    )
    run = run_stages(STAGES, ctx, work, ctx.log)
    built = Bundle.load(out)
    problems = verify_bundle(built)
    if problems:
        raise RuntimeError("bundle does not verify: " + "; ".join(problems))
    return Built(built, run, opts)


def cached_build(
    opts: BuildOptions, root: Path, accepted: tuple[str, ...]
) -> tuple[Path, Built | None]:
    """The bundle of ``opts``, built once per content key under ``root`` (the
    tests': the model's files, this declaration's code, the options)."""
    md = read_model_dir(opts.model)
    ctx = BuildContext(opts, md, LICENSE.id)
    files = [*export.model_files(ctx).values(), md.bpe]
    options = {k: v for k, v in asdict(opts).items() if k not in PATH_OPTIONS}

    def make(out: Path, work: Path) -> Built:
        return build(replace(opts, out=out, work=work), accepted)

    key = cache.content_key([__name__], files, options)
    return cache.cached_build(Path(root), key, make)


#: options that only say where things are (the key holds their contents)
PATH_OPTIONS: Final = ("model", "hub", "out", "work", "qnn_cache", "grammars")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="scripts/build-indextts", description=__doc__.split("\n")[0],
        epilog="A rerun with the same --out resumes: unchanged stages are skipped.",
    )  # fmt: skip
    add = p.add_argument
    add("model", type=Path, metavar="MODEL_DIR", help="IndexTTS-2 as downloaded")
    add("--hub", type=Path, required=True,
        help="the Hugging Face hub cache holding w2v-BERT 2.0, MaskGCT, CAM++ and "
             "BigVGAN (HF_HOME/hub)")  # fmt: skip
    add("--out", type=Path, required=True, metavar="DIR", help="the bundle directory")
    add("--target", choices=TARGETS, default="simulator")
    add("--language", choices=("auto", "en", "zh"), default="auto",
        help="the text normaliser's language (auto: per text, en and zh)")  # fmt: skip
    add("--work", type=Path, metavar="DIR", help="default: OUT.work")
    add("--qnn-cache", type=Path, metavar="DIR", help="content-keyed compile cache")
    add("--grammars", type=Path, metavar="DIR",
        help="NeMo's compiled grammars (same version) to start from")  # fmt: skip
    add("--sim-gates", action="store_true", default=None,
        help="simulator gates on a board target too")  # fmt: skip
    add_accept_license(p, LICENSE)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    opts = BuildOptions(
        a.model, a.hub, a.out, a.target, a.work, a.qnn_cache, language=a.language,
        grammars=a.grammars, sim_gates=a.sim_gates,
    )  # fmt: skip
    try:
        built = build(opts, a.accept_licenses)
    except LicenseNotAccepted as exc:
        print(f"build-indextts: {exc}", file=sys.stderr)
        return EXIT_NOT_ACCEPTED
    except ModelDirError as exc:
        print(f"build-indextts: {exc}", file=sys.stderr)
        return EXIT_NOT_ACCEPTED
    except (GateError, CompileError, FileExistsError, ValueError, RuntimeError) as exc:
        print(f"build-indextts: error: {exc}", file=sys.stderr)
        return 1
    b = built.bundle
    print(summary(built.run))
    print(f"bundle {b.root}: {len(b.graphs)} graphs, {b.sample_rate} Hz, "
          f"license {b.license}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
