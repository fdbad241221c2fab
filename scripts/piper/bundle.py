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

MADE: Final = bundling.MADE


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


made_here = bundling.made_here


def run(ctx: PiperBuild, results: Results) -> Bundled:
    out = ctx.out
    try:
        bundling.write_staged(
            out, ctx.work.work, lambda root: _write(root, ctx, results)
        )
    except FileExistsError as exc:
        raise ConversionError(str(exc)) from None
    files = [p for p in out.rglob("*") if p.is_file()]
    return Bundled(
        out,
        len(results["export"].graphs),
        len(compiled(results[GROUP])),
        sum(p.stat().st_size for p in files),
    )


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
