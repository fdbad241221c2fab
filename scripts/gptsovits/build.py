"""GPT-SoVITS v2Pro training folder -> six static NPU graphs -> verified bundle.

    scripts/build-gptsovits LOGS_DIR --gpt-epoch N --sovits-epoch M --ref CLIP \\
        --target qcs8550|simulator --out DIR [--bert DIR --g2pw DIR]
        [--hubert DIR --sv CKPT] [--aux-ref CLIP ...]

Stages (docs/builds.md; each skipped when its inputs, the results it reads and
its code are unchanged; state in <work>/state.json): export the graphs to fp32
ONNX, CPU parity gates, CPU tables + text resources, reference features,
compile each binary with the QNN EP (or AI Hub), simulator parity gates on the
binaries, bundle directory + .tar (layout: daemon/engines/gptsovits/layout.py)
verified like `hexvoice bundle verify`. A failed gate stops the run naming
graph, metric and threshold. With ``--hubert`` and ``--sv`` the bundle also
gets the four reference-side graphs (hubert, ssl_quant, ref_enc, sv;
stages/zero_shot.py) and ``params.reference``: the engine then makes voices
from a clip (zero-shot).
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from scripts.common.build import report
from scripts.common.build.run import Declared, StageRun, run_stages
from scripts.common.build.stage import Stage
from scripts.common.qnn_compile import TARGETS, CompileError
from scripts.gptsovits import shapes as shapes_mod
from scripts.gptsovits.export.aihub import AiHubUnavailable, check_available
from scripts.gptsovits.models.checkpoints import load_sovits_checkpoint
from scripts.gptsovits.models.sovits import SovitsDims
from scripts.gptsovits.pipeline.context import BuildContext, Settings
from scripts.gptsovits.pipeline.sources import (
    SourceError,
    SourceOptions,
    TrainingFolderError,
    find_sources,
    resolve_aux_refs,
)
from scripts.gptsovits.stages import (
    binaries,
    bundle,
    gates_cpu,
    gates_sim,
    graphs,
    refs,
    results,
    tables,
    text,
    zero_shot,
)
from scripts.gptsovits.stages.bundle import BuildError
from scripts.gptsovits.stages.report import graph_rows
from scripts.gptsovits.verify.cpu import GateError

log = logging.getLogger(__name__)

SHAPES = {"full": shapes_mod.FULL, "tiny": shapes_mod.TINY}
REFERENCE_SHAPES = {
    "full": shapes_mod.FULL_REFERENCE,
    "tiny": shapes_mod.TINY_REFERENCE,
}
#: the options the stages read as they are (context.py Settings)
AS_ASKED = ("target", "compiler", "qnn_cache", "sim_gates", "ref_text")
#: what the CLI reports as a clear error (no traceback)
STOPS = (
    SourceError,
    TrainingFolderError,
    GateError,
    CompileError,
    AiHubUnavailable,
    BuildError,
    ValueError,
)


@dataclass(frozen=True, kw_only=True)
class BuildOptions(SourceOptions):
    target: str
    out: Path
    voice: str | None = None
    work: Path | None = None
    compiler: str = binaries.LOCAL
    shapes: str = "full"
    qnn_cache: Path | None = None
    sim_gates: bool = True
    ref_text: str | None = None  # default: the clip's norm_text in 2-name2text
    aux_refs: tuple[str, ...] = ()  # --aux-ref: styles averaged in (aux_refs.py)

    def validate(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"--target must be one of {sorted(TARGETS)}")
        if self.compiler not in binaries.COMPILERS:
            raise ValueError(f"--compiler must be one of {binaries.COMPILERS}")
        if self.shapes not in SHAPES:
            raise ValueError(f"--shapes must be one of {sorted(SHAPES)}")


def stages() -> list[Declared]:
    """The build, declared (docs/builds.md)."""
    z, sim = zero_shot, gates_sim
    return [
        Stage(
            "export_t2s",
            graphs.export_t2s,
            inputs=graphs.t2s_inputs,
            outputs=graphs.t2s_outputs,
        ),
        Stage(
            "export_vits",
            graphs.export_vits,
            inputs=graphs.vits_inputs,
            outputs=graphs.vits_outputs,
        ),
        Stage(
            "export_text",
            text.export_text,
            results.TextGraphs,
            text.inputs,
            text.outputs,
        ),
        Stage("gates_cpu", gates_cpu.gates_cpu, dict[str, float], gates_cpu.inputs),
        Stage(
            "export_reference",
            z.export_reference,
            results.ReferenceGraphs,
            z.inputs,
            z.outputs,
            when=z.zero_shot,
        ),
        Stage(
            "gates_reference",
            z.gates_reference,
            dict[str, float],
            z.gate_inputs,
            when=z.zero_shot,
        ),
        Stage("tables", tables.tables, results.Tables, tables.inputs, tables.outputs),
        Stage("refs", refs.refs, results.Reference, refs.inputs, refs.outputs),
        binaries.group(),
        Stage(
            "gates_sim",
            sim.gates_sim,
            dict[str, sim.SimResult],
            sim.inputs,
            when=sim.enabled,
        ),
        Stage(
            "bundle",
            bundle.bundle,
            results.Bundled,
            bundle.inputs,
            bundle.outputs,
            after=bundle.AFTER,
        ),
    ]


@dataclass(frozen=True)
class Built:
    """What a build made and what its stages did."""

    bundle: Path
    tar: Path
    run: StageRun


def context(opts: BuildOptions) -> BuildContext:
    """The build's context; every input is checked first, before any work."""
    opts.validate()
    if opts.compiler == binaries.AIHUB:
        check_available(opts.target)  # fail before hours of work
    src = find_sources(opts)
    shapes = SHAPES[opts.shapes]
    # An overlap below the generator's receptive radius would fail the 100 dB
    # window gate only after the whole export.
    dims = SovitsDims.from_checkpoint(load_sovits_checkpoint(src.sovits_pth))
    radius = shapes.check_vocoder(dims)
    overlap = shapes.gen_overlap
    log.info("vits_gen: receptive radius %.2f frames, overlap %d", radius, overlap)
    settings = Settings(
        voice=opts.voice or src.exp,
        out=Path(opts.out),
        aux_refs=resolve_aux_refs(src.logs, opts.aux_refs, src.sv_ckpt),
        **{name: getattr(opts, name) for name in AS_ASKED},
    )
    zero_shot = src.hubert_dir is not None and src.sv_ckpt is not None
    reference = REFERENCE_SHAPES[opts.shapes] if zero_shot else None
    work = Path(opts.work or opts.out.with_name(opts.out.name + ".work"))
    return BuildContext(src, shapes, work, settings, reference)


def build(opts: BuildOptions) -> Built:
    ctx = context(opts)
    run = run_stages(stages(), ctx, ctx.work)
    return Built(ctx.settings.out, ctx.settings.tar, run)


def summary(built: Built) -> str:
    return report.summary(built.run, graph_rows(built.run))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="scripts/build-gptsovits", description=__doc__.split("\n")[0]
    )
    p.add_argument("logs", type=Path, help="training folder logs/<exp>")
    p.add_argument("--gpt-epoch", type=int, required=True)
    p.add_argument("--sovits-epoch", type=int, required=True)
    p.add_argument("--ref", required=True, help="reference clip (name in 5-wav32k/)")
    p.add_argument("--target", choices=sorted(TARGETS), required=True)
    p.add_argument("--out", type=Path, required=True, help="bundle directory")
    p.add_argument("--bert", type=Path, help="chinese-roberta-wwm-ext-large dir")
    p.add_argument("--g2pw", type=Path, help="G2PWModel dir (with g2pW.onnx)")
    p.add_argument("--ref-text", help="its transcript (default: from 2-name2text)")
    p.add_argument("--hubert", type=Path, help="chinese-hubert-base dir")
    p.add_argument(
        "--sv", type=Path, help="ERes2NetV2 .ckpt (with --hubert: zero-shot graphs)"
    )
    p.add_argument(
        "--aux-ref",
        action="append",
        default=[],
        metavar="CLIP",
        help="another reference whose style is averaged in, as upstream's "
        "aux_ref_audio_paths (repeatable; a 5-wav32k/ clip, or an audio file "
        "with --sv)",
    )
    p.add_argument("--voice", help="reference voice name (default: experiment)")
    p.add_argument("--work", type=Path, help="work dir (default: OUT.work)")
    p.add_argument("--compiler", choices=binaries.COMPILERS, default=binaries.LOCAL)
    p.add_argument("--shapes", choices=sorted(SHAPES), default="full")
    p.add_argument("--qnn-cache", type=Path, help="content-keyed compile cache")
    p.add_argument("--no-sim-gates", action="store_true")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    opts = BuildOptions(
        **{k: v for k, v in vars(a).items() if k not in ("no_sim_gates", "aux_ref")},
        sim_gates=not a.no_sim_gates,
        aux_refs=tuple(a.aux_ref),
    )
    try:
        built = build(opts)
    except STOPS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary(built))
    print(f"bundle: {built.bundle}\ntar:    {built.tar}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
