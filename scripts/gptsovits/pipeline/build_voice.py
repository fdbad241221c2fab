"""GPT-SoVITS v2Pro training folder -> six static NPU graphs -> verified bundle.

    scripts/build-gptsovits LOGS_DIR --gpt-epoch N --sovits-epoch M --ref CLIP \\
        --target qcs8550|simulator --out DIR [--bert DIR --g2pw DIR]
        [--hubert DIR --sv CKPT] [--aux-ref CLIP ...]

Steps (each skipped when its inputs, options and code are unchanged; state in
<work>/state.json): export the graphs to fp32 ONNX, CPU parity gates, CPU
tables + text resources, reference features, compile each graph with the QNN EP
(or AI Hub), simulator parity gates on the binaries, bundle directory + .tar
(layout: daemon/engines/gptsovits/layout.py) verified like `hexvoice bundle
verify`. A failed gate stops the run naming graph, metric and threshold.
With ``--hubert`` and ``--sv`` the bundle also gets the four reference-side
graphs (hubert, ssl_quant, ref_enc, sv; reference_graphs.py) and
``params.reference``: the engine then makes voices from a clip (zero-shot).
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from daemon.engines.gptsovits import layout
from daemon.sdk.bundles.manifest import pack
from daemon.sdk.verify import verify_bundle
from scripts.common import bundling, weight_sharing
from scripts.common.qnn_compile import TARGETS, CompileError
from scripts.common.steps import BuildReport, Steps, code_hash
from scripts.common.weight_sharing import Unit
from scripts.gptsovits.export import shapes as shapes_mod
from scripts.gptsovits.export.aihub import (
    AiHubUnavailable,
    check_available,
    compile_aihub,
)
from scripts.gptsovits.pipeline import aux_refs
from scripts.gptsovits.pipeline.context import ROOT, BuildContext
from scripts.gptsovits.pipeline.reference_graphs import ReferenceGraphs
from scripts.gptsovits.pipeline.refs import TrainingFolderError
from scripts.gptsovits.pipeline.sources import SourceError, find_sources
from scripts.gptsovits.verify.cpu import GateError

log = logging.getLogger(__name__)

SHAPES = {"full": shapes_mod.FULL, "tiny": shapes_mod.TINY}
REFERENCE_SHAPES = {
    "full": shapes_mod.FULL_REFERENCE,
    "tiny": shapes_mod.TINY_REFERENCE,
}
COMPILERS = ("local", "aihub")
LANGUAGES = ("zh", "en")
# Sources whose change must redo the steps (the frontend shapes the refs).
CODE_ROOTS = tuple(
    ROOT / rel
    for rel in (
        "scripts/gptsovits",
        "scripts/common/qnn_compile.py",
        "scripts/common/bundling.py",
        "scripts/common/weight_sharing.py",
        "scripts/common/onnx_int32.py",  # the g2pw body's index path
        "scripts/common/floor.py",  # the gates' bounds from float32's own error
        "scripts/common/gate_result.py",
        "daemon/engines/gptsovits/layout.py",
        # the T2S gates run the engine's driver on the toolkit and its runners
        "daemon/engines/gptsovits/t2s.py",
        "daemon/sdk/ar",
        "daemon/sdk/graphs.py",
        # the references are phonemized by the engine's own frontend
        "daemon/engines/gptsovits/frontend",
        "daemon/sdk/audio/windows.py",
    )
)


class BuildError(RuntimeError):
    """The pipeline stopped; the message says where and why."""


@dataclass(frozen=True)
class BuildOptions:
    logs: Path
    gpt_epoch: int
    sovits_epoch: int
    ref: str
    target: str
    out: Path
    bert: Path | None = None
    g2pw: Path | None = None
    voice: str | None = None
    work: Path | None = None
    compiler: str = "local"
    shapes: str = "full"
    qnn_cache: Path | None = None
    sim_gates: bool = True
    ref_text: str | None = None  # default: the clip's norm_text in 2-name2text
    hubert: Path | None = None  # chinese-hubert-base dir
    sv: Path | None = None  # ERes2NetV2 checkpoint (with --hubert: zero-shot)
    aux_refs: tuple[str, ...] = ()  # --aux-ref: styles averaged in (aux_refs.py)

    def validate(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"--target must be one of {sorted(TARGETS)}")
        if self.compiler not in COMPILERS:
            raise ValueError(f"--compiler must be one of {COMPILERS}")
        if self.shapes not in SHAPES:
            raise ValueError(f"--shapes must be one of {sorted(SHAPES)}")


def build(opts: BuildOptions) -> BuildReport:
    opts.validate()
    if opts.compiler == "aihub":
        check_available(opts.target)  # fail before hours of work
    src = find_sources(
        opts.logs, opts.gpt_epoch, opts.sovits_epoch, opts.ref, opts.bert, opts.g2pw,
        opts.hubert, opts.sv,
    )  # fmt: skip
    shapes = SHAPES[opts.shapes]
    voice = opts.voice or src.exp
    work = Path(opts.work or opts.out.with_name(opts.out.name + ".work"))
    ctx = BuildContext(src, shapes, work, voice, opts.ref_text)
    # Before any export: an overlap below the generator's receptive radius
    # would fail the 100 dB window gate only after the whole export.
    radius = shapes.check_vocoder(ctx.sovits.dims)
    log.info("vits_gen: receptive radius %.2f frames, overlap %d", radius,
             shapes.gen_overlap)  # fmt: skip
    ctx.aux_refs = aux_refs.resolve(src.logs, opts.aux_refs, src.sv_ckpt)
    if src.hubert_dir is not None and src.sv_ckpt is not None:
        ctx.zero_shot = ReferenceGraphs(
            src.hubert_dir, src.sv_ckpt, lambda: ctx.sovits,
            REFERENCE_SHAPES[opts.shapes], ctx.onnx_dir,
        )  # fmt: skip
    keys = ctx.graph_keys()
    total = 7 + len(keys) + (1 if opts.sim_gates else 0) + (2 if ctx.zero_shot else 0)
    steps = Steps(work, total, code_hash(CODE_ROOTS))
    shape_opts = asdict(shapes)
    res: dict[str, dict] = {}

    res["export_t2s"] = steps.run(
        "export_t2s",
        {"gpt": src.gpt_ckpt, "shapes": shape_opts},
        ctx.t2s_outputs(),
        ctx.export_t2s,
    )
    res["export_vits"] = steps.run(
        "export_vits",
        {"sovits": src.sovits_pth, "shapes": shape_opts},
        [ctx.onnx(layout.VITS_ENC), ctx.onnx(layout.VITS_GEN)],
        ctx.export_vits,
    )
    res["export_text"] = steps.run(
        "export_text",
        {"bert": src.bert_dir, "g2pw": src.g2pw_dir, "shapes": shape_opts},
        ctx.text_outputs(),
        ctx.export_text,
    )
    res["gates_cpu"] = steps.run(
        "gates_cpu",
        {"onnx": ctx.onnx_dir, "gpt": src.gpt_ckpt, "sovits": src.sovits_pth},
        [],
        ctx.gates_cpu,
    )
    if ctx.zero_shot is not None:
        ref, ref_in = ctx.zero_shot, {
            "hubert": src.hubert_dir, "sv": src.sv_ckpt, "sovits": src.sovits_pth,
            "shapes": asdict(REFERENCE_SHAPES[opts.shapes]),
        }  # fmt: skip
        res["export_reference"] = steps.run(
            "export_reference", ref_in, ref.outputs(), ref.export
        )
        res["gates_reference"] = steps.run(
            "gates_reference", {**ref_in, "onnx": ref.outputs()}, [], ref.gates_cpu
        )
    res["tables"] = steps.run(
        "tables",
        {"gpt": src.gpt_ckpt, "sovits": src.sovits_pth, "g2pw": src.g2pw_dir},
        ctx.table_outputs(),
        ctx.write_tables,
    )
    res["refs"] = steps.run(
        "refs",
        {
            "files": ctx.ref_inputs(),
            "aux_refs": aux_refs.inputs(src.logs, ctx.aux_refs),
            "ref_text": opts.ref_text,
            "hubert": src.hubert_dir,  # exact prompt tokens (refs.py)
            "sovits": src.sovits_pth,
            "text": ctx.text_dir,
            "onnx": [ctx.onnx(layout.BERT), ctx.onnx(layout.G2PW)],
        },
        [ctx.ref_path()],
        ctx.write_refs,
    )
    sources = {key: ctx.npu_onnx(key) for key in keys}
    units = _plan(opts, sources)
    # weight-shared binaries do not load on the simulator: its gates run the
    # same ONNX compiled a graph per binary (the steps of an unshared build)
    gated = [Unit(k, (k,)) for u in units if u.shared for k in u.keys]
    steps.total += len(units) - len(keys) + (len(gated) if opts.sim_gates else 0)
    compiled = {}
    for unit in [*units, *(gated if opts.sim_gates else [])]:
        onnx = [sources[k] for k in unit.keys] if unit.shared else sources[unit.name]
        result = steps.run(
            f"compile {unit.name}",
            {"onnx": onnx, "target": opts.target, "compiler": opts.compiler},
            [ctx.bin_dir / f"{unit.name}.bin"],
            lambda unit=unit: _compile(ctx, opts, unit, sources),
        )
        if unit in units:
            compiled[unit.name] = result
    res["compile"] = compiled
    if opts.sim_gates:
        res["gates_sim"] = steps.run(
            "gates_sim",
            {"bins": ctx.bin_dir, "refs": ctx.ref_path(), "onnx": ctx.onnx_dir},
            [],
            ctx.gates_sim,
        )
    tar = opts.out.with_name(opts.out.name + ".tar")
    res["bundle"] = steps.run(
        "bundle",
        {
            "stage": ctx.stage,
            "bins": ctx.bin_dir,
            "compile": compiled,
            "out": str(opts.out),
        },
        [opts.out / "voice.yaml", tar],
        lambda: _bundle(ctx, opts, compiled, tar),
    )
    return BuildReport(opts.out, tar, res, steps.ran, steps.skipped)


def _plan(opts: BuildOptions, sources: dict[str, Path]) -> tuple[Unit, ...]:
    """The binaries to build: AI Hub compiles a graph per binary."""
    if opts.compiler == "aihub":
        return tuple(Unit(key, (key,)) for key in sources)
    return weight_sharing.plan(sources, opts.target)


def _compile(
    ctx: BuildContext, opts: BuildOptions, unit: Unit, sources: dict[str, Path]
) -> dict:
    ctx.bin_dir.mkdir(parents=True, exist_ok=True)
    if opts.compiler == "aihub":
        (key,) = unit.keys  # _plan never groups for AI Hub
        dest = compile_aihub(sources[key], ctx.bin_dir, key, opts.target)
        return {"seconds": None, "qnn_sdk": "aihub", "bytes": dest.stat().st_size}
    return weight_sharing.compile_unit(
        unit, sources, ctx.bin_dir, opts.target, opts.qnn_cache
    )


def _bundle(ctx: BuildContext, opts: BuildOptions, compiled: dict, tar: Path) -> dict:
    out = Path(opts.out)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(ctx.stage, out)
    placed = weight_sharing.placements(compiled, ctx.bin_dir)
    keys = ctx.graph_keys()
    graphs = bundling.add_placed(
        out, {k: placed[k] for k in keys}, {k: ctx.onnx(k) for k in keys}
    )
    sdks = {c["qnn_sdk"] for c in compiled.values()}
    bundle = bundling.finish(
        out,
        engine=layout.ENGINE_ID,
        name=ctx.src.exp,
        sample_rate=shapes_mod.SAMPLE_RATE,
        languages=LANGUAGES,
        graphs=graphs,
        params=ctx.params().to_dict(),
        voices={ctx.voice: ctx.voice_entry()},
        qnn_sdk=",".join(sorted(sdks)),
        target=opts.target,
    )
    problems = verify_bundle(bundle)
    if problems:
        raise BuildError("bundle verify failed: " + "; ".join(problems))
    pack(out, tar)
    return {"files": len(bundle.files) + 2 * len(graphs)}


def summary(report: BuildReport) -> str:
    comp = report.results.get("compile", {})
    sim = report.results.get("gates_sim", {})
    cpu = report.results.get("gates_cpu", {})
    rows = [("graph", "bin MB", "compile s", "CPU gate", "sim gate", "sim s/call")]
    for key, c in comp.items():
        s = sim.get(key, {})
        calls = s.get("seconds") or []
        rows.append(
            (
                key,
                f"{c.get('bytes', 0) / 1e6:.2f}",
                str(c.get("compile_seconds", "-")),
                BuildContext.cpu_metric(key, cpu),
                f"{s['metric']} {s['value']:.4g}" if s else "-",
                f"{sum(calls) / len(calls):.2f}" if calls else "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows
    )


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
        "--aux-ref", action="append", default=[], metavar="CLIP",
        help="another reference whose style is averaged in, as upstream's "
        "aux_ref_audio_paths (repeatable; a 5-wav32k/ clip, or an audio file "
        "with --sv)",
    )  # fmt: skip
    p.add_argument("--voice", help="reference voice name (default: experiment)")
    p.add_argument("--work", type=Path, help="work dir (default: OUT.work)")
    p.add_argument("--compiler", choices=COMPILERS, default="local")
    p.add_argument("--shapes", choices=sorted(SHAPES), default="full")
    p.add_argument("--qnn-cache", type=Path, help="content-keyed compile cache")
    p.add_argument("--no-sim-gates", action="store_true")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
    opts = BuildOptions(
        a.logs, a.gpt_epoch, a.sovits_epoch, a.ref, a.target, a.out, a.bert, a.g2pw,
        a.voice, a.work, a.compiler, a.shapes, a.qnn_cache, not a.no_sim_gates,
        a.ref_text, a.hubert, a.sv, tuple(a.aux_ref),
    )  # fmt: skip
    try:
        report = build(opts)
    except (
        SourceError,
        TrainingFolderError,
        GateError,
        CompileError,
        AiHubUnavailable,
        BuildError,
        ValueError,
    ) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary(report))
    print(f"bundle: {report.bundle}\ntar:    {report.tar}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
