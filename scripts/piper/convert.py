"""Convert a Piper voice (.onnx + .onnx.json) into a hexvoice `piper-vits` bundle.

    python -m scripts.piper.convert VOICE.onnx --target T --out DIR

T is a scripts/common/qnn_compile.py target (qcs8550, simulator). The output is a
standard voice bundle (daemon/sdk/bundles/manifest.py, voice.yaml format 1):

    voice.yaml           engine piper-vits; voice parameters under `params`
    graphs/enc_P{P}.bin  text encoder + SDP conditioning per phoneme bucket (NPU)
    graphs/flow_F{F}.bin reverse flow per frame bucket                     (NPU)
    graphs/dec_W{W}.bin  HiFiGAN on one W-frame window with a frame mask   (NPU)
    onnx/*.onnx          the same graphs in fp32 (onnxruntime CPU backend)
    cpu/sdp.npz          SDP spline-flow weights for the numpy port        (CPU)

Why the graph is cut where it is: cuts.py. The phoneme map, espeak voice and
scales come from the voice's own config (daemon/engines/piper/params.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from daemon.engines.piper.engine import ENGINE_ID
from daemon.engines.piper.params import PiperParams, dec_key, enc_key, flow_key
from daemon.sdk.audio.windows import OVERLAP_FRAMES
from daemon.sdk.bundles.manifest import Bundle, GraphSpec, sha256_file
from scripts.common import bundling
from scripts.common.onnx_surgery import ConversionError, op_histogram
from scripts.common.qnn_compile import TARGETS as QNN_TARGETS
from scripts.common.qnn_compile import CompileError, qnn_sdk_version
from scripts.common.receptive_field import check_overlap, onnx_radius
from scripts.piper import graphs
from scripts.piper.cpu_graphs import cpu_graphs
from scripts.piper.cuts import find_cuts
from scripts.piper.model_card import voice_attribution
from scripts.piper.sdp_export import SDP_CHECK_PHONEMES, check_port, sdp_weights

TARGETS = tuple(QNN_TARGETS)
# Piper sentences are one espeak clause each: ids = 2 * phonemes + 3 (pad after
# each phoneme, BOS/EOS), so 512 ids cover ~250 phonemes.
PHONEME_BUCKETS = (64, 128, 256, 512)
# 22.05 kHz / 256 hop = 86 frames/s: 128 frames = 1.5 s ... 1024 = 11.9 s. Longer
# sentences run the largest flow in overlapped windows (flow_context).
FRAME_BUCKETS = (128, 256, 512, 1024)
# Decoder windows: steady 168 frames, within the v73's 8 MiB VTCM (peak op 48 KiB
# per frame -> <= 170); first 64, so first audio leaves after a short decode (a
# 32-frame graph ran at 15 dB SNR on the HTP simulator vs 29 dB for 64..168);
# tails in the size windows.plan picks. Oracle sentences: 1.22 frames computed
# per frame kept vs 1.37 with one W96 (scripts/bench/piper_windows.py).
DECODER_WINDOW = 168
FIRST_WINDOW = 64
TAIL_WINDOWS = (96, 128)
SDP_FILE = "cpu/sdp.npz"
# A bundle is read by the daemon's own (systemd) user, not only by its builder.
BUNDLE_MODE = 0o755
# Piper config phoneme types the engine can phonemize (params.PHONEME_TYPES).
_PHONEME_TYPES = ("espeak", "text")


@dataclass(frozen=True)
class ConvertOptions:
    target: str = "simulator"
    phoneme_buckets: tuple[int, ...] = PHONEME_BUCKETS
    frame_buckets: tuple[int, ...] = FRAME_BUCKETS
    window: int = DECODER_WINDOW
    overlap: int = OVERLAP_FRAMES
    first_window: int | None = FIRST_WINDOW
    window_sizes: tuple[int, ...] = TAIL_WINDOWS

    @property
    def decoder_sizes(self) -> tuple[int, ...]:  # as PiperParams.decoder_sizes
        return tuple(sorted({self.window, self.first_window or self.window,
                             *self.window_sizes}))  # fmt: skip

    def validate(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {self.target!r}")
        for name in ("phoneme_buckets", "frame_buckets"):
            buckets = getattr(self, name)
            if not buckets or list(buckets) != sorted(set(buckets)) or buckets[0] < 1:
                raise ValueError(f"{name} must be increasing positive sizes: {buckets}")
        for size in self.decoder_sizes:
            if size - 2 * self.overlap <= 0:
                raise ValueError(f"window {size} / overlap {self.overlap} invalid")


def log(msg: str) -> None:
    print(f"[convert_piper] {msg}", file=sys.stderr, flush=True)


def convert(
    voice: Path,
    out: Path,
    options: ConvertOptions,
    compile_cache: Path | None = None,
) -> Bundle:
    """Write the bundle to `out` (must not exist) and return it.

    The bundle is staged beside `out` and renamed into place when complete, so a
    failed conversion leaves nothing half-written behind. `compile_cache` is a
    content-keyed cache of HTP compiles (scripts/common/qnn_compile.py).
    """
    options.validate()
    if out.exists():
        raise ConversionError(f"{out} exists; choose a new directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.partial-"))
    try:
        _convert(Path(voice), staging, options, compile_cache)
        staging.chmod(BUNDLE_MODE)  # mkdtemp made it private to this user
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Bundle.load(out)


def read_config(voice: Path) -> dict:
    config_path = Path(f"{voice}.json")
    if not voice.is_file() or not config_path.is_file():
        raise ConversionError(f"need {voice} and {config_path}")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    kind = config.get("phoneme_type", "espeak")
    if kind not in _PHONEME_TYPES:
        raise ConversionError(
            f"{config_path}: phoneme_type {kind!r} is not supported "
            f"(the engine phonemizes {_PHONEME_TYPES})"
        )
    if int(config.get("num_speakers", 1)) > 1:
        raise ConversionError(f"{config_path}: multi-speaker voices are not supported")
    return config


def _convert(
    voice: Path, root: Path, options: ConvertOptions, compile_cache: Path | None
) -> None:
    config = read_config(voice)
    steps = 4
    log(f"[1/{steps}] reading {voice.name}")
    model = onnx.load(voice)
    cuts = find_cuts(model)
    hop, channels = graphs.hop_length(model), graphs.channels(model)

    log(f"[2/{steps}] cutting static graphs")
    built: dict[str, onnx.ModelProto] = {}
    for p in options.phoneme_buckets:
        built[enc_key(p)] = graphs.encoder(model, cuts, p)
    for f in options.frame_buckets:
        built[flow_key(f)] = graphs.flow(model, cuts, f)
    for w in options.decoder_sizes:
        built[dec_key(w)] = graphs.decoder_window(model, cuts, w, hop)
    # The window overlap must cover the generator's reach (exact windows).
    radius = onnx_radius(graphs.decoder_dynamic(model, cuts), "z")
    check_overlap(options.overlap, radius, dec_key(options.window))
    log(f"  decoder receptive radius {radius:.2f} frames <= overlap {options.overlap}")
    (root / "onnx").mkdir()
    for name, graph in built.items():
        onnx.save(graph, root / "onnx" / f"{name}.onnx")
        ops = ", ".join(f"{k} {v}" for k, v in op_histogram(graph).items())
        log(f"  {name}: {len(graph.graph.node)} nodes ({ops})")

    log(f"[3/{steps}] numpy SDP port")
    arrays = sdp_weights(model)
    (root / "cpu").mkdir()
    np.savez(root / SDP_FILE, **arrays)
    smallest_fit = _bucket_for(SDP_CHECK_PHONEMES, options.phoneme_buckets)
    sdp_err = check_port(model, cuts, built[enc_key(smallest_fit)], arrays)
    log(f"  numpy SDP vs onnxruntime: max |logw| error {sdp_err:.2e}")

    log(f"[4/{steps}] compiling {len(built)} graphs for HTP v73 ({options.target})")
    specs = compile_all(root, list(built), options.target, compile_cache)
    specs = cpu_graphs(root, model, cuts, specs)

    inference = config.get("inference", {})
    params = PiperParams(
        phoneme_type=config.get("phoneme_type", "espeak"),
        espeak_voice=config["espeak"]["voice"],
        phoneme_id_map={k: tuple(v) for k, v in config["phoneme_id_map"].items()},
        vowel_clusters=tuple(tuple(c) for c in config.get("vowel_clusters", [])),
        noise_scale=float(inference.get("noise_scale", 0.667)),
        length_scale=float(inference.get("length_scale", 1.0)),
        noise_w=float(inference.get("noise_w", 0.8)),
        hop=hop,
        channels=channels,
        phoneme_buckets=options.phoneme_buckets,
        frame_buckets=options.frame_buckets,
        flow_context=graphs.flow_context(built[flow_key(options.frame_buckets[0])]),
        window=options.window,
        overlap=options.overlap,
        sdp=SDP_FILE,
        first_window=options.first_window,
        window_sizes=options.window_sizes,
    )
    extra = {"source": {"file": voice.name, "sha256": sha256_file(voice)}}
    extra["sdp_max_abs_err"] = float(f"{sdp_err:.3g}")
    extra["vocoder_radius_frames"] = round(radius, 2)
    attribution = voice_attribution(voice)
    if attribution is not None:
        extra["attribution"] = attribution
    language = config.get("language", {}).get("code") or params.espeak_voice
    bundling.finish(
        root,
        engine=ENGINE_ID,
        name=voice.name.removesuffix(".onnx"),
        sample_rate=int(config["audio"]["sample_rate"]),
        languages=(language,),
        graphs=specs,
        params={**params.to_dict(), **extra},
        qnn_sdk=qnn_sdk_version(),
        target=options.target,
    )


def compile_all(
    root: Path, keys: list[str], target: str, cache: Path | None
) -> dict[str, GraphSpec]:
    """Compile onnx/<key>.onnx: a binary per graph, or one per group of graphs
    with the same weights (the length buckets) on a weight-sharing target
    (scripts/common/weight_sharing.py); every failure named at once."""
    from scripts.common import weight_sharing
    from scripts.piper.htp import compile_htp

    work = root / ".htp"
    sources = {key: root / "onnx" / f"{key}.onnx" for key in keys}
    units = weight_sharing.plan(sources, target)
    placed: dict[str, tuple[Path, str | None]] = {}
    failed = []
    for i, unit in enumerate(units, 1):
        if unit.shared:
            try:
                done = weight_sharing.compile_unit(unit, sources, work, target, cache)
            except CompileError as exc:
                # name the op at fault, as for one graph
                blamed = [compile_htp(sources[k], work, target) for k in unit.keys]
                why = "; ".join(r.error for r in blamed if not r.ok) or str(exc)[:300]
                failed.append(f"{unit.name}: {why}")
                log(f"  [{i}/{len(units)}] {unit.name}: FAILED: {why}")
                continue
            for key, graph in done["graphs"].items():
                placed[key] = (work / f"{unit.name}.bin", graph)
            size = done["bytes"] / 1e6
            log(f"  [{i}/{len(units)}] {unit.name} ({', '.join(unit.keys)}): "
                f"{size:.1f} MB, one weight copy")  # fmt: skip
            continue
        (key,) = unit.keys
        result = compile_htp(sources[key], work, target, cache)
        if not result.ok:
            failed.append(f"{key}: {result.error}")
            log(f"  [{i}/{len(units)}] {key}: FAILED: {result.error}")
            continue
        assert result.binary is not None
        placed[key] = (result.binary, None)
        size = result.binary_bytes / 1e6
        log(f"  [{i}/{len(units)}] {key}: {size:.1f} MB in {result.seconds:.1f}s")
    if failed:
        shutil.rmtree(work, ignore_errors=True)
        raise ConversionError("HTP compile failed:\n  " + "\n  ".join(failed))
    specs = bundling.add_placed(root, {k: placed[k] for k in keys}, sources)
    shutil.rmtree(work, ignore_errors=True)
    return specs


def _bucket_for(n: int, buckets: tuple[int, ...]) -> int:
    for size in buckets:
        if n <= size:
            return size
    return buckets[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="convert_piper", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "voice", type=Path, help="Piper voice .onnx (its .onnx.json beside it)"
    )
    parser.add_argument("--target", choices=TARGETS, default="simulator")
    parser.add_argument(
        "--out", type=Path, required=True, help="bundle directory (new)"
    )
    parser.add_argument(
        "--phoneme-buckets", type=int, nargs="+", default=PHONEME_BUCKETS
    )
    parser.add_argument("--frame-buckets", type=int, nargs="+", default=FRAME_BUCKETS)
    parser.add_argument(
        "--compile-cache", type=Path, help="content-keyed cache of HTP compiles"
    )
    args = parser.parse_args(argv)
    options = ConvertOptions(
        target=args.target,
        phoneme_buckets=tuple(args.phoneme_buckets),
        frame_buckets=tuple(args.frame_buckets),
    )
    try:
        bundle = convert(args.voice, args.out, options, args.compile_cache)
    except (ConversionError, ValueError) as exc:
        print(f"convert_piper: error: {exc}", file=sys.stderr)
        return 1
    log(f"bundle {bundle.root}: {len(bundle.graphs)} graphs, {bundle.sample_rate} Hz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
