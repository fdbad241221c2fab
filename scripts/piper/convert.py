"""Convert a Piper voice (.onnx + .onnx.json) into a hexvoice `piper-vits` bundle.

    python -m scripts.piper.convert VOICE.onnx --target T --out DIR

T is cpu (static fp32 graphs only) or a scripts/qnn_compile.py target
(qcs8550, simulator), which also compiles every graph for the HTP.

Bundle layout (manifest.json describes it):
    enc_P{P}.onnx    text encoder + SDP conditioning per phoneme bucket  (NPU)
    flow_F{F}.onnx   reverse flow per frame bucket                      (NPU)
    dec_W{W}.onnx    HiFiGAN on one W-frame window with frame mask      (NPU)
    sdp.npz          SDP spline-flow weights for the numpy port          (CPU)
    voice.json       the voice's own Piper config (phonemes, scales)
    qnn/             QNN HTP context binaries (--target qcs8550 or simulator)
The static ONNX graphs are what the CPU (onnxruntime fp32) backend runs and what
the HTP compile starts from. Why the graph is cut where it is: cuts.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx

from daemon.vocoder_windows import OVERLAP_FRAMES, WINDOW_FRAMES
from scripts.qnn_compile import TARGETS as QNN_TARGETS

from . import graphs
from .cuts import find_cuts
from .sdp_export import SDP_CHECK_PHONEMES, check_port, sdp_weights
from .surgery import ConversionError, op_histogram

ENGINE = "piper-vits"
BUNDLE_FORMAT = 1
# "cpu": static fp32 graphs only (onnxruntime CPU backend); otherwise a QNN target
# of scripts/qnn_compile.py, whose context binaries go to qnn/.
TARGETS = ("cpu", *QNN_TARGETS)
# Piper sentences are one espeak clause each: ids = 2 * phonemes + 1 (pad after
# each phoneme, BOS/EOS), so 512 ids cover ~250 phonemes.
PHONEME_BUCKETS = (64, 128, 256, 512)
# 22.05 kHz / 256 hop = 86 frames/s: 128 frames = 1.5 s ... 1024 = 11.9 s. Longer
# sentences run the largest flow in overlapped windows (flow_context below).
FRAME_BUCKETS = (128, 256, 512, 1024)
# Bundles kept by cached_convert: enough for the option sets one test run uses.
CACHE_KEEP = 4


@dataclass(frozen=True)
class ConvertOptions:
    target: str = "cpu"
    phoneme_buckets: tuple[int, ...] = PHONEME_BUCKETS
    frame_buckets: tuple[int, ...] = FRAME_BUCKETS
    window: int = WINDOW_FRAMES
    overlap: int = OVERLAP_FRAMES

    def validate(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {self.target!r}")
        for name in ("phoneme_buckets", "frame_buckets"):
            buckets = getattr(self, name)
            if not buckets or list(buckets) != sorted(set(buckets)) or buckets[0] < 1:
                raise ValueError(f"{name} must be increasing positive sizes: {buckets}")
        if self.window - 2 * self.overlap <= 0:
            raise ValueError(f"window {self.window} / overlap {self.overlap} invalid")


@dataclass
class Report:
    graphs: dict[str, dict] = field(default_factory=dict)
    sdp_max_abs_err: float = 0.0


def log(msg: str) -> None:
    print(f"[convert_piper] {msg}", file=sys.stderr, flush=True)


def convert(voice: Path, out: Path, options: ConvertOptions) -> dict:
    """Write the bundle to `out` (must not exist) and return the manifest.

    The bundle is staged beside `out` and renamed into place when complete, so a
    failed conversion leaves nothing half-written behind.
    """
    options.validate()
    if out.exists():
        raise ConversionError(f"{out} exists; choose a new directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.partial-"))
    try:
        manifest = _convert(voice, staging, options)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _convert(voice: Path, out: Path, options: ConvertOptions) -> dict:
    voice = Path(voice)
    config_path = Path(f"{voice}.json")
    if not voice.is_file() or not config_path.is_file():
        raise ConversionError(f"need {voice} and {config_path}")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    model = onnx.load(voice)
    cuts = find_cuts(model)
    hop, channels = graphs.hop_length(model), graphs.channels(model)
    report = Report()

    built: dict[str, onnx.ModelProto] = {}
    for p in options.phoneme_buckets:
        built[f"enc_P{p}"] = graphs.encoder(model, cuts, p)
    for f in options.frame_buckets:
        built[f"flow_F{f}"] = graphs.flow(model, cuts, f)
    built[f"dec_W{options.window}"] = graphs.decoder_window(
        model, cuts, options.window, hop
    )
    for name, graph in built.items():
        start = time.perf_counter()
        onnx.save(graph, out / f"{name}.onnx")
        report.graphs[name] = {"onnx": f"{name}.onnx", "ops": op_histogram(graph)}
        seconds = time.perf_counter() - start
        log(f"{name}: {len(graph.graph.node)} nodes ({seconds:.1f}s)")

    arrays = sdp_weights(model)
    np.savez(out / "sdp.npz", **arrays)
    enc_name = f"enc_P{_bucket_for(SDP_CHECK_PHONEMES, options.phoneme_buckets)}"
    report.sdp_max_abs_err = check_port(model, cuts, built[enc_name], arrays)
    log(f"numpy SDP vs onnxruntime: max |logw| error {report.sdp_max_abs_err:.2e}")
    shutil.copyfile(config_path, out / "voice.json")

    if options.target != "cpu":
        compile_all(out, report, options.target)
    manifest = {
        "engine": ENGINE,
        "format": BUNDLE_FORMAT,
        "target": options.target,
        "voice": "voice.json",
        "source": {"file": voice.name, "sha256": _sha256(voice)},
        "sample_rate": int(config["audio"]["sample_rate"]),
        "hop": hop,
        "channels": channels,
        "phoneme_buckets": list(options.phoneme_buckets),
        "frame_buckets": list(options.frame_buckets),
        "flow_context": graphs.flow_context(built[f"flow_F{options.frame_buckets[0]}"]),
        "window": {"frames": options.window, "overlap": options.overlap},
        "sdp": "sdp.npz",
        "sdp_max_abs_err": report.sdp_max_abs_err,
        "graphs": report.graphs,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def compile_all(out: Path, report: Report, target: str) -> None:
    from .htp import compile_htp

    for name, info in report.graphs.items():
        log(f"{name}: compiling for HTP v73 ({target}) ...")
        result = compile_htp(out / info["onnx"], out / "qnn", target)
        info["qnn"] = {
            "ok": result.ok,
            "seconds": round(result.seconds, 2),
            "ctx": result.ctx_onnx.relative_to(out).as_posix()
            if result.ctx_onnx
            else None,
            "binary": result.binary.relative_to(out).as_posix()
            if result.binary
            else None,
            "binary_bytes": result.binary_bytes,
            "error": result.error,
        }
        status = f"{result.binary_bytes / 1e6:.1f} MB" if result.ok else result.error
        verdict = "ok" if result.ok else "FAILED"
        log(f"{name}: {verdict} in {result.seconds:.1f}s, {status}")
    failed = [
        f"{n}: {i['qnn']['error']}"
        for n, i in report.graphs.items()
        if not i["qnn"]["ok"]
    ]
    if failed:
        raise ConversionError("HTP compile failed:\n  " + "\n  ".join(failed))


def cached_convert(voice: Path, options: ConvertOptions, cache_root: Path) -> Path:
    """Convert once per (voice bytes, converter source, options); return the bundle.

    The key covers everything that can change the output, so a stale bundle is
    never reused; the bundle is built beside the cache and renamed into place.
    """
    key = hashlib.sha256()
    key.update(_sha256(Path(voice)).encode())
    key.update(_sha256(Path(f"{voice}.json")).encode())
    for src in sorted(_sources()):
        key.update(src.read_bytes())
    key.update(json.dumps(asdict(options), sort_keys=True).encode())
    bundle = cache_root / key.hexdigest()[:20]
    if not (bundle / "manifest.json").is_file():
        try:
            convert(Path(voice), bundle, options)
        except (ConversionError, OSError):  # lost a race to a concurrent run?
            if not (bundle / "manifest.json").is_file():
                raise
    (bundle / "manifest.json").touch()  # mark as recently used for pruning
    _prune(cache_root, CACHE_KEEP)
    return bundle


def _prune(cache_root: Path, keep: int) -> None:
    """Drop all but the `keep` most recently used bundles (each ~200 MB)."""
    bundles = [p for p in cache_root.iterdir() if (p / "manifest.json").is_file()]
    bundles.sort(key=lambda p: (p / "manifest.json").stat().st_mtime, reverse=True)
    for stale in bundles[keep:]:
        shutil.rmtree(stale, ignore_errors=True)


def _sources() -> list[Path]:
    here = Path(__file__).resolve().parent
    daemon = here.parent.parent / "daemon"
    return [
        *here.glob("*.py"),
        here.parent / "qnn_compile.py",
        daemon / "engines/piper/cpu.py",
        daemon / "vocoder_windows.py",
    ]


def _bucket_for(n: int, buckets: tuple[int, ...]) -> int:
    for size in buckets:
        if n <= size:
            return size
    return buckets[-1]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="convert_piper", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "voice", type=Path, help="Piper voice .onnx (its .onnx.json beside it)"
    )
    parser.add_argument("--target", choices=TARGETS, default="cpu")
    parser.add_argument(
        "--out", type=Path, required=True, help="bundle directory (new)"
    )
    parser.add_argument(
        "--phoneme-buckets", type=int, nargs="+", default=PHONEME_BUCKETS
    )
    parser.add_argument("--frame-buckets", type=int, nargs="+", default=FRAME_BUCKETS)
    args = parser.parse_args(argv)
    options = ConvertOptions(
        target=args.target,
        phoneme_buckets=tuple(args.phoneme_buckets),
        frame_buckets=tuple(args.frame_buckets),
    )
    try:
        convert(args.voice, args.out, options)
    except (ConversionError, ValueError) as exc:
        print(f"convert_piper: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
