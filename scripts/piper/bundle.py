"""Stage ``bundle``: the piper-vits bundle written from the work dir.

The binaries (bins/), the any-length graphs (onnx/) and the SDP weights
(stage/cpu/sdp.npz) are copied in and hashed, the voice's parameters (its
config's, convert.piper_params) written under ``params``
(daemon/engines/piper/params.py), and the manifest last
(scripts/common/bundling.py).  The bundle is staged beside ``out`` and renamed
into place when complete, so a failed build leaves no half-written bundle; a
rerun replaces the bundle this work dir made before.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from daemon.engines.piper.engine import ENGINE_ID
from scripts.common import bundling
from scripts.common.build.compile import GROUP, compiled
from scripts.common.build.stage import Results
from scripts.common.onnx_surgery import ConversionError
from scripts.piper.convert import SDP_FILE, PiperBuild, piper_params, read_config
from scripts.piper.export import Exported
from scripts.piper.gates import CpuGates
from scripts.piper.voice import Voice

# A bundle is read by the daemon's own (systemd) user, not only by its builder.
BUNDLE_MODE: Final = 0o755
#: in the work dir: the bundle this work dir made (so a rerun may replace it)
MADE: Final = "bundle.out"


@dataclass(frozen=True)
class Bundled:
    root: Path
    graphs: int
    binaries: int
    bytes: int


def inputs(ctx: PiperBuild) -> Mapping[str, Any]:
    return {"config": ctx.config_path, "options": asdict(ctx.options)}


def outputs(ctx: PiperBuild) -> Iterable[Path]:
    return [ctx.out / "voice.yaml", ctx.work.work / MADE]


def made_here(out: Path, work: Path) -> bool:
    """Whether ``out`` is the bundle the build in ``work`` wrote."""
    record = Path(work) / MADE
    return record.is_file() and record.read_text() == str(Path(out).resolve())


def run(ctx: PiperBuild, results: Results) -> Bundled:
    out = ctx.out
    if out.exists() and not made_here(out, ctx.work.work):
        raise ConversionError(f"{out} exists; choose a new directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.partial-"))
    try:
        _write(staging, ctx, results)
        staging.chmod(BUNDLE_MODE)  # mkdtemp made it private to this user
        # recorded first: a bundle in place is always one a rerun may replace
        (ctx.work.work / MADE).write_text(str(out.resolve()))
        _replace(out, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    files = [p for p in out.rglob("*") if p.is_file()]
    return Bundled(
        out,
        len(results["export"].graphs),
        len(compiled(results[GROUP])),
        sum(p.stat().st_size for p in files),
    )


def _replace(out: Path, staging: Path) -> None:
    if not out.exists():
        staging.rename(out)
        return
    old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
    out.rename(old / out.name)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def _write(root: Path, ctx: PiperBuild, results: Results) -> None:
    voice: Voice = results["voice"]
    exported: Exported = results["export"]
    gates: CpuGates = results["gates_cpu"]
    o = ctx.options
    binaries = compiled(results[GROUP])
    (sdk,) = {b.qnn_sdk for b in binaries.values()}  # the binaries' own
    placed = {}
    for unit, binary in binaries.items():
        for key, graph in binary.graphs.items():
            placed[key] = (ctx.work.bin_path(unit), graph)
    keys = o.graph_keys  # manifest order (a stored dict's keys come back sorted)
    specs = bundling.add_placed(
        root, {k: placed[k] for k in keys}, {k: ctx.work.onnx(k) for k in keys}
    )
    (root / SDP_FILE).parent.mkdir(parents=True)
    shutil.copyfile(ctx.sdp_file, root / SDP_FILE)
    config = read_config(ctx.voice)
    params = piper_params(config, o, voice.hop, voice.channels, exported.flow_context)
    extra: dict[str, Any] = {"source": {"file": voice.file, "sha256": voice.sha256}}
    extra["sdp_max_abs_err"] = gates.sdp_err
    extra["vocoder_radius_frames"] = gates.radius
    if voice.attribution is not None:
        extra["attribution"] = voice.attribution
    bundling.finish(
        root,
        engine=ENGINE_ID,
        name=voice.name,
        sample_rate=int(config["audio"]["sample_rate"]),
        languages=(config.get("language", {}).get("code") or params.espeak_voice,),
        graphs=specs,
        params={**params.to_dict(), **extra},
        qnn_sdk=sdk,
        target=o.target,
    )
