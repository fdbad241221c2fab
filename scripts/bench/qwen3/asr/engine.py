"""Benchmark the qwen3-asr engine at full size (host overhead and bandwidth).

    .venv/bin/python -m scripts.bench.qwen3.asr.engine [--backend cpu qnn] [--steps N]
        [--quick]

1. Host time per decode step, graphExecute excluded, with full-size buffers
   (28 layers, 8 KV heads x 128, hidden 1024, vocab 151,936; prefill 512, KV
   1024; fp16 K/V): the engine's own session (Qwen3AsrEngine -> Decoder ->
   daemon/sdk/ar KvGraph, greedy chooser, TextStream, partials) on a stand-in
   bundle whose graphs have exactly that I/O and trivial compute
   (scripts/bench/qwen3/asr/standin.py).  A step is the wall time from one decode
   feed to the next minus the runner's last_execute_s (QNN: graphExecute
   alone; CPU backend: onnxruntime's whole run()); then the step's pieces
   timed alone on the same buffers, warm and with every cache flushed first.
   On x86 the graph runs on the same CPU and leaves the caches cold for the
   step (the simulator for seconds); a board's NPU does not, but its outputs
   arrive in DRAM: the warm and flushed sums bracket the board.
2. Resample + log-mel of 10 s of 44.1 kHz stereo through the engine's audio.py
   and mel.py, whole and fed in 100 ms chunks.
3. Bundle bytes per graph (scripts/bench/qwen3/asr/sizes.py: compiled where
   feasible, computed from parameters otherwise, saying which).
4. Bytes streamed per decode step and the bandwidth floor at 64 GB/s: an
   estimate (no board latency model for this engine yet).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Final

import numpy as np

from daemon.engines.qwen3.asr.audio import SAMPLE_RATE
from daemon.sdk.asr import TranscriptionOptions
from scripts.bench.qwen3.asr import mel, sizes
from scripts.bench.qwen3.asr.mel import chirp
from scripts.bench.qwen3.asr.standin import Dims
from scripts.bench.qwen3.sizes_common import (
    BANDWIDTH_BPS,
    host_runs,
    option_parser,
    print_calibration,
)
from scripts.bench.timing import (
    FLUSHED_CALLS,
    PIECE_CALLS,
    alone,
    flush_buffer,
    stats_ms,
)

#: host budget per decode step: small next to the graph's own time
TARGET_HOST_MS: Final = 0.3
#: the session's utterance: 10 s (130 audio tokens; the prompt fits prefill 512)
UTTERANCE_S: Final = 10.0
FULL_STEPS, RUNS = 200, 3
#: --quick: decode steps per run
QUICK_STEPS: Final = 20
QUICK_DIMS: Final = Dims(2, 4, 2, 32, 64, 128, 3000, 2900, 256, 384, 128, 4)
DEFAULT_WORK: Final = Path(tempfile.gettempdir()) / "hexvoice-bench-asr"


# --- 1. host time per decode step -------------------------------------------
def host_step(backend: str, d: Dims, steps: int, runs: int, cache: Path | None):
    from daemon.engines.qwen3.asr.decoder import DecodeStats
    from daemon.engines.qwen3.asr.engine import Qwen3AsrEngine
    from daemon.engines.qwen3.asr.options import Request
    from daemon.engines.qwen3.asr.text import TextStream, partial_text
    from daemon.sdk.bundles.manifest import Bundle
    from daemon.sdk.graphs import GraphHost
    from scripts.bench.qwen3.asr.standin import standin_bundle

    print(f"\n== host per decode step, {backend}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="bench_asr_") as tmp:
        bundle = Bundle.load(standin_bundle(Path(tmp), d, cache).root)
        host = GraphHost(backend)
        try:
            engine = Qwen3AsrEngine()
            (graphs,) = host.open([bundle])
            engine.load(bundle, graphs)
            engine.warmup()
            dec = engine.model.decoder
            dec.stats = DecodeStats(host_steps=[])
            audio, opts = (
                chirp(UTTERANCE_S, SAMPLE_RATE),
                TranscriptionOptions(language="en", extra={"max_new_tokens": steps}),
            )
            partials = 0
            for _ in range(runs):
                session = engine.open(opts)
                for t in (*session.feed(audio, SAMPLE_RATE), *session.finish()):
                    partials += not t.final
                session.close()
            host_s = dec.stats.host_steps
            graph_ms = 1e3 * dec.stats.graph_seconds / max(dec.stats.steps, 1)
            # the step's pieces alone, on the engine's own buffers and objects
            bucket = dec.buckets[d.kv_len]
            b, rng, n = bucket.bind(), np.random.default_rng(2), PIECE_CALLS
            tokens = rng.integers(0, d.bpe, n)
            x, cos, sin = b["x"][0, 0], b["cos"][0, 0], b["sin"][0, 0]
            pos = bucket.filled - 1
            request = Request.from_options(opts, engine.model.p)
            choose = request.chooser(d.vocab, engine.model.p.tokens.eos,
                                     np.zeros(150, np.int32))  # fmt: skip
            logits = b["logits"][0]
            stream = TextStream(engine.model.tokenizer)

            def rope(i: int) -> None:
                cos[...], sin[...] = dec.cos[i % pos], dec.sin[i % pos]

            def text(i: int) -> None:
                stream.push(int(tokens[i]))
                partial_text(stream.text, forced=True)

            def wrapper(i: int) -> float:
                t0 = time.perf_counter()
                bucket.execute()
                return time.perf_counter() - t0 - bucket.graph_seconds

            pieces = [
                ("embedding row (fp16 mmap -> x)",
                 lambda i: x.__setitem__(..., dec.embed[tokens[i]])),
                ("RoPE cos/sin row", rope),
                ("K/V write-back + mask",
                 lambda i: bucket.write(pos, b["k_new"], b["v_new"])),
                (f"greedy choice ({d.vocab:,} logits)", lambda i: choose(logits)),
                ("TextStream.push + partial", text),
            ]  # fmt: skip
            flush = flush_buffer()
            parts = [(name, alone(fn, n), alone(fn, FLUSHED_CALLS, flush))
                     for name, fn in pieces]  # fmt: skip
            runner = [wrapper(i) for i in range(20)]
        finally:
            host.close()
    return host_s, graph_ms, partials, parts, runner


def print_host(backend: str, d: Dims, result) -> float:  # type: ignore[no-untyped-def]
    host_s, graph_ms, partials, parts, runner = result
    median = 1e3 * float(np.median(host_s))
    print(
        f"\nhost per decode step, {backend} backend: {len(host_s)} steps "
        f"({d.layers} layers, KV {d.kv_len}, vocab {d.vocab:,}; {partials} partials)"
    )
    print(f"{'':<36}{'median':>9}{'min':>9}{'max':>9}  ms")
    ok = "OK" if median <= TARGET_HOST_MS else "OVER"
    print(f"{'step, graphExecute excluded':<36}{stats_ms(host_s)}  "
          f"target <= {TARGET_HOST_MS} ms: {ok}")  # fmt: skip
    print(f"  {'runner around execute':<34}{stats_ms(runner)}")
    print(f"  {'(graph execute, excluded)':<34}{graph_ms:>9.3f}")
    print(f"{'the pieces alone':<36}{'warm':>9}{'flushed':>9}{'fl. max':>9}  "
          "ms (medians)")  # fmt: skip
    warm = flushed = 0.0
    for name, w, f in parts:
        warm, flushed = warm + float(np.median(w)), flushed + float(np.median(f))
        print(f"  {name:<34}{1e3 * np.median(w):>9.3f}{1e3 * np.median(f):>9.3f}"
              f"{1e3 * max(f):>9.3f}")  # fmt: skip
    print(f"  {'sum':<34}{1e3 * warm:>9.3f}{1e3 * flushed:>9.3f}")
    return median


# --- 3. + 4. bundle bytes, bytes streamed per step ---------------------------
def bench_sizes(text: sizes.Text, audio: dict, work: Path, cache: Path | None,
                target: str | None) -> None:  # fmt: skip
    calib = None
    if target is not None:
        print("\n== bundle bytes (calibration compiles)", file=sys.stderr)
        calib = sizes.calibrate(text, audio, work, cache, target)
        decode = f"decode_{text.kv_len}, 1 layer + head"
        labels = {"encoder": "encoder window", "decode": decode}
        rows = {labels[name]: row for name, row in calib.items()}
        print_calibration(f"{target}, htp v73 fp16", rows, 30)
    rows = sizes.bundle_rows(text, audio, calib)
    print(
        f"\nbundle bytes per graph ({text.layers} text layers; encoder "
        f"{audio['encoder_layers']} layers, d_model {audio['d_model']} ASSUMED; "
        "one bucket per role)"
    )
    print(f"{'member':<24}{'params':>14}{'bytes':>16}  how")
    for r in rows:
        print(f"{r.graph:<24}{r.params:>14,}{r.nbytes:>16,}  {r.how}")
    print(
        f"{'total':<24}{sum(r.params for r in rows):>14,}"
        f"{sum(r.nbytes for r in rows):>16,}"
    )
    decode = next(r.nbytes for r in rows if r.graph.startswith("decode"))
    parts = sizes.streamed(text, decode)
    total = sum(n for _, n in parts)
    print(
        "\nbytes streamed per decode step (ESTIMATE: no board latency model yet, "
        "for this engine)"
    )
    for name, n in parts:
        print(f"  {name:<42}{n:>16,}")
    floor_ms = 1e3 * total / BANDWIDTH_BPS
    print(
        f"{'total':<44}{total:>16,}\nbandwidth floor at "
        f"{BANDWIDTH_BPS / 1e9:g} GB/s: {floor_ms:.2f} ms/step "
        f"(<= {1e3 / floor_ms:.0f} tokens/s)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = option_parser(
        "python -m scripts.bench.qwen3.asr.engine",
        DEFAULT_WORK,
        quick="tiny shapes, CPU backend, tiny calibration (< 1 min)",
        no_compile="bundle bytes from parameters alone (no torch)",
    )
    parser.add_argument("--steps", type=int, default=FULL_STEPS)
    args = parser.parse_args(argv)
    if args.quick:
        dims, text, audio = QUICK_DIMS, sizes.TEXT_TINY, sizes.AUDIO_TINY
    else:
        dims, text, audio = Dims(), sizes.Text(), sizes.AUDIO_FULL
    backends, steps, runs, work = host_runs(args, args.steps, QUICK_STEPS, RUNS)
    mel.bench_mel(5 if args.quick else 15)
    for backend in backends:
        n = steps if backend == "cpu" else max(steps // 8, 10)  # simulator: s/step
        result = host_step(backend, dims, n, runs, args.qnn_cache)
        print_host(backend, dims, result)
    target = None if args.no_compile else args.target
    bench_sizes(text, audio, work, args.qnn_cache, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
