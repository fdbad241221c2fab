"""A Piper voice (.onnx + .onnx.json) -> a verified piper-vits bundle.

    scripts/build-piper VOICE.onnx --target simulator|qcs8550 --out DIR \\
        [--work DIR] [--qnn-cache DIR] [--phoneme-buckets 64 128 256 512] \\
        [--frame-buckets 128 256 512 1024]

Stages (each skipped when its inputs, the results it reads and its code are
unchanged; state in <work>/state.json, docs/builds.md): read and check the
voice; export its static graphs (encoder per phoneme bucket, flow per frame
bucket, HiFiGAN per decoder window) with their any-length CPU twins; the SDP
weights for the numpy port; the CPU gates (decoder overlap vs HiFiGAN's
reach, numpy SDP vs the voice's own flows); one compile per binary for the
target; the bundle, verified as `hexvoice bundle verify` does.  Why the graph
is cut where it is: cuts.py; the bundle's layout: convert.py.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import verify_bundle
from daemon.targets.profile import PROFILE_DIR
from scripts.common.build.cache import cached_build, content_key, key_options
from scripts.common.build.compile import (
    GROUP,
    CompilePlan,
    compile_group,
    compiled,
)
from scripts.common.build.htp_probe import find_unsupported
from scripts.common.build.report import summary
from scripts.common.build.run import StageRun, run_stages
from scripts.common.build.stage import Stage
from scripts.common.build.workdir import WorkDir
from scripts.common.onnx_surgery import ConversionError
from scripts.common.qnn_compile import CompileError
from scripts.piper import bundle, export, gates, sdp_export, voice
from scripts.piper.convert import (
    FRAME_BUCKETS,
    PHONEME_BUCKETS,
    TARGETS,
    ConvertOptions,
    PiperBuild,
    progress,
    read_config,
)

#: bundles the cache keeps: enough for the option sets one test run uses
CACHE_KEEP: Final = 4


@dataclass(frozen=True)
class BuildOptions:
    voice: Path
    out: Path
    convert: ConvertOptions = field(default_factory=ConvertOptions)
    #: default: OUT.work beside the bundle
    work: Path | None = None
    #: content-keyed cache of HTP compiles (scripts/common/qnn_compile.py)
    qnn_cache: Path | None = None

    @property
    def work_dir(self) -> Path:
        return Path(self.work or self.out.with_name(self.out.name + ".work"))


#: the gates read the exported encoder and the SDP weights
READS_GRAPHS: Final = ("export", "sdp")
#: the bundle reads every result
READS: Final = ("voice", "export", "sdp", "gates_cpu", GROUP)


def compile_plan(ctx: PiperBuild) -> CompilePlan:
    """One binary per graph (or per weight group on a sharing target); a
    refused graph is explained by the op and node the HTP rejects."""
    keys = ctx.options.graph_keys
    return CompilePlan(
        {key: ctx.work.npu_onnx_path(key) for key in keys},
        ctx.work.bin_dir,
        ctx.options.target,
        ctx.qnn_cache,
        explain=find_unsupported,
    )


def _io(stage: ModuleType) -> tuple[Any, Any]:
    """A stage module's ``inputs`` and ``outputs``."""
    return stage.inputs, stage.outputs


STAGES: Final = (
    Stage("voice", voice.run, voice.Voice, voice.inputs),
    Stage("export", export.run, export.Exported, *_io(export)),
    Stage("sdp", sdp_export.run, sdp_export.SdpWeights, *_io(sdp_export)),
    Stage("gates_cpu", gates.run, gates.CpuGates, gates.inputs, after=READS_GRAPHS),
    compile_group(compile_plan),
    Stage("bundle", bundle.run, bundle.Bundled, *_io(bundle), after=READS),
)


@dataclass(frozen=True)
class BuildReport:
    bundle: Bundle
    run: StageRun


def graph_rows(run: StageRun, keys: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Per graph, in manifest order: nodes, its binary and the binary's MB."""
    exported = run.results["export"].graphs
    binaries = {
        key: (unit, c.bytes)
        for unit, c in compiled(run.results[GROUP]).items()
        for key in c.graphs
    }
    rows = [("graph", "nodes", "binary", "MB")]
    for key in keys:
        unit, size = binaries[key]
        rows.append((key, str(exported[key].nodes), unit, f"{size / 1e6:.1f}"))
    return rows


def build(opts: BuildOptions, log: Callable[[str], None] = progress) -> BuildReport:
    """Build (or resume) the bundle at ``opts.out``; refuses an ``out`` that
    exists and is not this work dir's own bundle."""
    opts.convert.validate()
    voice_path, out, work = Path(opts.voice), Path(opts.out), opts.work_dir
    read_config(voice_path)  # a clear refusal before any work
    if out.exists() and not bundle.made_here(out, work):
        raise ConversionError(f"{out} exists; choose a new directory")
    ctx = PiperBuild(voice_path, out, opts.convert, WorkDir(work), opts.qnn_cache, log)
    run = run_stages(STAGES, ctx, work, log)
    built = Bundle.load(out)
    problems = verify_bundle(built)
    if problems:
        raise ConversionError("bundle does not verify: " + "; ".join(problems))
    return BuildReport(built, run)


def cache_key(voice_path: Path, options: ConvertOptions) -> str:
    """Everything that can change the bundle: the build's code, the voice's
    files, the target's profile (it decides weight sharing), the options and
    the toolchain (scripts/common/build/cache.py)."""
    card = voice.card_path(voice_path)
    files = [Path(voice_path), Path(f"{voice_path}.json")]
    files += [card] if card.is_file() else []  # the voice's credit comes from it
    files.append(PROFILE_DIR / f"{options.target}.yaml")
    opts = BuildOptions(Path(voice_path), Path(), options)
    return content_key([__name__], files, key_options(opts))


def cached_bundle(
    voice_path: Path,
    options: ConvertOptions,
    root: Path,
    qnn_cache: Path | None = None,
    log: Callable[[str], None] = progress,
) -> Path:
    """The bundle for (voice, options), built once per content key under
    ``root`` (shared by tests, the demo and benchmarks)."""

    def make(out: Path, work: Path) -> Any:
        return build(BuildOptions(voice_path, out, options, work, qnn_cache), log)

    key = cache_key(voice_path, options)
    path, report = cached_build(Path(root), key, make, keep=CACHE_KEEP)
    if report is None:
        log(f"cached bundle {path}")
    return path


_HELP: Final = {
    "voice": "the Piper voice, its .onnx.json (and MODEL_CARD, if any) beside it",
    "target": "what the binaries are for (default: %(default)s)",
    "out": "the bundle directory: new, or the one this work dir built (replaced)",
    "work": "graphs, binaries and state.json; a rerun resumes there "
    "(default: OUT.work)",
    "qnn_cache": "content-keyed cache of HTP compiles, shared between builds",
    "phoneme_buckets": "encoder lengths in phoneme ids (default: "
    + " ".join(map(str, PHONEME_BUCKETS))
    + ")",
    "frame_buckets": "flow lengths in frames (default: "
    + " ".join(map(str, FRAME_BUCKETS))
    + ")",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/build-piper",
        description=__doc__.split("\n")[0],
        epilog="A rerun with the same --out resumes: unchanged stages are "
        "skipped (docs/builds.md).",
    )
    add = parser.add_argument
    add("voice", type=Path, metavar="VOICE.onnx", help=_HELP["voice"])
    add("--target", choices=TARGETS, default="simulator", help=_HELP["target"])
    add("--out", type=Path, required=True, metavar="DIR", help=_HELP["out"])
    add("--work", type=Path, metavar="DIR", help=_HELP["work"])
    add("--qnn-cache", type=Path, metavar="DIR", help=_HELP["qnn_cache"])
    for flag, default in (
        ("--phoneme-buckets", PHONEME_BUCKETS),
        ("--frame-buckets", FRAME_BUCKETS),
    ):
        name = flag.removeprefix("--").replace("-", "_")
        add(flag, type=int, nargs="+", default=default, metavar="N", help=_HELP[name])
    args = parser.parse_args(argv)
    options = ConvertOptions(
        target=args.target,
        phoneme_buckets=tuple(args.phoneme_buckets),
        frame_buckets=tuple(args.frame_buckets),
    )
    opts = BuildOptions(args.voice, args.out, options, args.work, args.qnn_cache)
    try:
        report = build(opts)
    except (ConversionError, CompileError, ValueError) as exc:
        print(f"build-piper: error: {exc}", file=sys.stderr)
        return 1
    b = report.bundle
    print(summary(report.run, graph_rows(report.run, options.graph_keys)))
    print(f"bundle {b.root}: {len(b.graphs)} graphs, {b.sample_rate} Hz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
