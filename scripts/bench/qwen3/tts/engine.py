"""Benchmark the qwen3-tts engine at full size (host overhead and bandwidth).

    .venv/bin/python -m scripts.bench.qwen3.tts.engine [--backend cpu qnn] [--frames N]
        [--bundle DIR ...] [--no-check] [--quick]

1. Host time per frame, graphExecute excluded (talker step + 16 code-predictor
   calls + bookkeeping: embedding rows summed, RoPE rows, K/V write-back,
   masks, logits processors, frame assembly, codec window scheduling), with
   full-size buffers (talker 28 layers, 8 KV heads x 128, hidden 1024, vocab
   3072, KV 1024; predictor 5 layers, 16 rows, vocab 2048; fp16 K/V): the
   engine's own synthesize() on a stand-in bundle whose graphs have exactly
   that I/O and trivial compute (scripts/bench/qwen3/tts/standin.py).  A frame
   is the engine's wall time per frame minus its graph seconds (the runner's
   last_execute_s: QNN graphExecute alone; CPU backend: onnxruntime's run()),
   from the engine's DecodeStats (a step is a frame).
2. Time to first audio vs the whole utterance on the CPU backend: the
   stand-in (host + I/O at full size, no model compute) and every ``--bundle``
   given (e.g. a real tiny or full build).
3. Bundle bytes per graph, computed from upstream's parameter layout
   (scripts/bench/qwen3/tts/sizes.py; checked against upstream's modules
   unless --no-check), fp16 and with the w8a16 code predictor.
4. Bytes streamed per frame and the bandwidth floor at 64 GB/s (an estimate:
   no board latency model yet), fp16 and with the w8a16 code predictor.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

import numpy as np

from scripts.bench.qwen3.sizes_common import (
    BANDWIDTH_BPS,
    FP16,
    INT8,
    host_runs,
    option_parser,
    print_calibration,
)
from scripts.bench.qwen3.tts import modules, sizes
from scripts.bench.qwen3.tts.sizes import Dims
from scripts.bench.timing import stats_ms

#: host budget per frame (80 ms of audio at 12.5 Hz): small next to graph time
TARGET_HOST_MS: Final = 1.0
#: frames per run (16 s of audio) and runs
FULL_FRAMES, RUNS = 200, 3
#: --quick: frames per run (and fewer calls per piece alone)
QUICK_FRAMES: Final = 24
#: a sentence of the stand-in tokenizer's letters (~1 s of text per word)
SENTENCE: Final = "please turn on the kitchen lights and set a timer for ten minutes"
DEFAULT_WORK: Final = Path(tempfile.gettempdir()) / "hexvoice-bench-tts-qwen3"
#: "codec windows" counted of the stand-in: 16 frames with 4 of context
WINDOW, FIRST = 16, 4


# --- 1. + 2. host per frame, time to first audio ----------------------------
def synth_runs(
    bundle_dir: Path,
    backend: str,
    frames: int,
    runs: int,
    options: dict[str, Any],
    pieces: bool = False,
) -> dict[str, Any]:
    """Run the engine's synthesize ``runs`` times: first-audio and total
    seconds, audio seconds, and the engine's frame stats when it has them."""
    from daemon.engines.qwen3.tts.engine import Qwen3TtsEngine
    from daemon.sdk.bundles.manifest import Bundle
    from daemon.sdk.graphs import GraphHost
    from daemon.sdk.tts import SynthesisOptions

    bundle = Bundle.load(bundle_dir)
    host = GraphHost(backend)
    try:
        engine = Qwen3TtsEngine()
        (graphs,) = host.open([bundle])
        engine.load(bundle, graphs)
        engine.warmup()
        stats = _stats_hook(engine)
        extra = {"max_new_tokens": frames, "greedy": True, **options}
        voice = engine.voices()[0].name
        opts = SynthesisOptions(voice=voice, language="english", extra=extra)
        first, total, audio = [], [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            t_first, n = None, 0
            for chunk in engine.synthesize(SENTENCE, opts):
                if t_first is None and len(chunk.audio):
                    t_first = time.perf_counter() - t0
                n += len(chunk.audio)
            total.append(time.perf_counter() - t0)
            first.append(t_first if t_first is not None else float("nan"))
            audio.append(n / engine.sample_rate)
        parts = []
        if pieces:
            from scripts.bench.qwen3.tts import pieces as frame_pieces

            calls = {} if frames > QUICK_FRAMES else {"calls": 200, "flushed": 20}
            parts = [(s, frame_pieces.pieces(engine, s, **calls))
                     for s in frame_pieces.SAMPLED]  # fmt: skip
    finally:
        host.close()
    host_frames = list(stats.host_steps) if stats is not None else []
    graph_ms = (1e3 * stats.graph_seconds / max(stats.steps, 1)
                if stats is not None else float("nan"))  # fmt: skip
    return {"first": first, "total": total, "audio": audio,
            "host": host_frames, "graph_ms": graph_ms, "pieces": parts}  # fmt: skip


def _stats_hook(engine: Any) -> Any:
    """The engine's frame accounting (its talker's DecodeStats, a step a
    frame), zeroed after the warm-up and recording each frame's host
    seconds."""
    stats = engine.model.stats
    stats.reset()
    stats.host_steps = []
    return stats


def print_host(backend: str, d: Dims, r: dict[str, Any]) -> None:
    host = r["host"]
    print(f"\nhost per frame, {backend} backend: {len(host)} frames "
          f"(talker {d.talker.layers} layers, KV {d.kv_len}, vocab {d.talker.vocab:,}; "
          f"predictor {d.predictor.layers} layers x 16 calls)")  # fmt: skip
    print(f"{'':<36}{'median':>9}{'min':>9}{'max':>9}  ms")
    if host:
        ok = "OK" if 1e3 * float(np.median(host)) <= TARGET_HOST_MS else "OVER"
        print(f"{'frame, graphExecute excluded':<36}{stats_ms(host)}  "
              f"target <= {TARGET_HOST_MS} ms: {ok}")  # fmt: skip
        print(f"  {'(graph execute, excluded)':<34}{r['graph_ms']:>9.3f}")
    else:
        print("frame, graphExecute excluded: the engine exposes no frame stats")
    from scripts.bench.qwen3.tts.pieces import print_pieces

    for sampled, rows in r["pieces"]:
        print_pieces(rows, "sampled" if sampled else "greedy")


def print_ttfa(label: str, r: dict[str, Any]) -> None:
    audio = float(np.median(r["audio"]))
    total = float(np.median(r["total"]))
    print(f"{label:<36}{1e3 * np.median(r['first']):>11.1f}{1e3 * total:>11.1f}"
          f"{audio:>9.2f}{total / audio if audio else float('nan'):>8.3f}")  # fmt: skip


# --- 3. + 4. bundle bytes, bytes streamed per frame --------------------------
def bench_sizes(d: Dims, check: bool, calib: dict | None) -> None:  # type: ignore[type-arg]
    if check:
        print("\n== parameter counts vs upstream's modules", file=sys.stderr)
        counted = modules.check(d)
        how = "upstream modules"
    else:
        counted = {"codec": CODEC_PARAMS, "speaker": SPEAKER_PARAMS}
        how = "recorded counts (--no-check)"
    per, cp16, cp8 = float(FP16), None, float(INT8)
    if calib is not None:
        print_calibration("simulator target = qcs8550's v73 binaries", calib, 34)
        ratio = {k: v[1] / v[0] for k, v in calib.items()}
        per = next(v for k, v in ratio.items() if k.startswith("talker"))
        cp16, cp8 = ratio["cp_step fp16"], ratio["cp_step w8a16"]
    per_how = "calibrated" if calib else "fp16 weights alone"
    print(f"\nbundle bytes per graph (codec/speaker params: {how}; one graph per "
          f"bucket; B/param {per_how})")  # fmt: skip
    print(f"{'member':<26}{'params':>14}{'fp16 bytes':>16}{'cp w8a16':>16}  how")
    fp16 = sizes.bundle_rows(d, counted, per, cp16)
    w8 = sizes.bundle_rows(d, counted, per, cp8)
    for a, b in zip(fp16, w8):
        print(f"{a.member:<26}{a.params:>14,}{a.nbytes:>16,}{b.nbytes:>16,}  {a.how}")
    print(
        f"{'total':<26}{sum(r.params for r in fp16):>14,}"
        f"{sum(r.nbytes for r in fp16):>16,}{sum(r.nbytes for r in w8):>16,}"
    )
    print("\nbytes streamed per frame (80 ms of audio; ESTIMATE: no board latency "
          "model yet)")  # fmt: skip
    parts16 = sizes.streamed(d, counted, per, cp16)
    parts8 = sizes.streamed(d, counted, per, cp8)
    print(f"  {'':<50}{'fp16':>15}{'cp w8a16':>15}")
    for (name, a), (_, b) in zip(parts16, parts8):
        print(f"  {name:<50}{a:>15,}{b:>15,}")
    t16, t8 = sum(n for _, n in parts16), sum(n for _, n in parts8)
    print(f"  {'total':<50}{t16:>15,}{t8:>15,}")
    for label, parts in (("fp16", parts16), ("cp w8a16", parts8)):
        ms, rtf = sizes.floor(parts)
        print(f"bandwidth floor at {BANDWIDTH_BPS / 1e9:g} GB/s, {label}: "
              f"{ms:.2f} ms/frame, RTF {rtf:.3f}")  # fmt: skip
    print(f"predicted board gain of the w8a16 predictor: {t16 / t8:.2f}x less "
          "traffic per frame")  # fmt: skip
    # design estimate: talker 0.88 GB once, predictor 161 MB x 16 per frame
    estimate = 0.88e9 * sizes.FRAMES_PER_S + 161e6 * 16 * sizes.FRAMES_PER_S
    print(
        f"(the estimated weights-only figure: {estimate / 1e9:.1f} GB/s of audio, "
        f"RTF {estimate / BANDWIDTH_BPS:.3f})"
    )


#: upstream's full-size codec decoder (ASSUMED config, sizes.py) and
#: speaker encoder, counted on their modules (modules.check) when this was written
CODEC_PARAMS: Final = 114_323_137
SPEAKER_PARAMS: Final = 8_854_336


def main(argv: list[str] | None = None) -> int:
    parser = option_parser(
        "python -m scripts.bench.qwen3.tts.engine",
        DEFAULT_WORK,
        quick="tiny shapes, CPU backend, few frames (< 1 min)",
        no_compile="bundle bytes from parameters alone (no calibration compiles)",
    )
    parser.add_argument("--frames", type=int, default=FULL_FRAMES)
    parser.add_argument(
        "--bundle",
        type=Path,
        nargs="*",
        default=[],
        help="also time these bundles' first audio (CPU backend)",
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="parameter counts without building upstream's modules",
    )
    args = parser.parse_args(argv)
    d = sizes.TINY if args.quick else Dims()
    backends, frames, runs, work = host_runs(args, args.frames, QUICK_FRAMES, RUNS)
    from scripts.bench.qwen3.tts.standin import standin_bundle

    bundle = standin_bundle(work, d, window=WINDOW, first=FIRST, max_new=frames,
                            cache_dir=args.qnn_cache)  # fmt: skip
    ttfa = []
    for backend in backends:
        n = frames if backend == "cpu" else max(frames // 8, 8)  # simulator: s/frame
        print(f"\n== host per frame, {backend}", file=sys.stderr)
        r = synth_runs(bundle.root, backend, n, runs, {}, pieces=backend == "cpu")
        print_host(backend, d, r)
        if backend == "cpu":
            ttfa.append((f"stand-in (full I/O, no compute), {n} frames", r))
    for path in args.bundle:
        ttfa.append((f"{path.name}, {frames} frames",
                     synth_runs(path, "cpu", frames, runs, {})))  # fmt: skip
    print(f"\ntime to first audio vs whole utterance, CPU backend "
          f"(first audio after {FIRST} frames; windows of {WINDOW})")  # fmt: skip
    print(f"{'':<36}{'first ms':>11}{'total ms':>11}{'audio s':>9}{'RTF':>8}")
    for label, r in ttfa:
        print_ttfa(label, r)
    # the size tables are about the full-size bundle, also with --quick
    calib = None
    if not args.no_compile:
        from scripts.bench.qwen3.tts.calib import calibrate

        print("\n== calibration compiles", file=sys.stderr)
        calib = calibrate(Dims(), args.work / "calib", args.qnn_cache, args.target)
    bench_sizes(Dims(), check=not args.no_check, calib=calib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
