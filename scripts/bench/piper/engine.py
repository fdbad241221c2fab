"""Benchmark the piper-vits engine against piper-tts, and its graphs on the HTP.

    python -m scripts.bench.piper.engine --bundle DIR [--sim] [--threads N] [--rounds R]

1. Side by side in one run, same sentences, same voice scales, both warmed up:
   our engine on the onnxruntime CPU backend vs piper-tts (onnxruntime, whole
   graph, CPU). RTF = synthesis time / audio seconds; TTFA = time until the
   first audio chunk. piper-tts yields one chunk per sentence, we yield one per
   decoder window, so TTFA is where streaming shows. Each sentence runs ours
   then theirs, R times (interleaved, so a busy machine slows both alike);
   per sentence the median of the rounds is shown. --threads applies to both
   (onnxruntime intra-op threads).
2. --sim: one call of every graph of the bundle on the QNN backend (the x86 HTP
   simulator here, the NPU on a board), with zero inputs of the right shapes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from daemon.engines.piper.engine import PiperEngine
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.graphs import GraphHost
from daemon.sdk.local import open_engine
from daemon.sdk.tts import SynthesisOptions
from scripts.piper.oracle import SENTENCES, default_voice

SEED = 1
PARAGRAPH = " ".join(SENTENCES)


@dataclass
class Timed:
    ttfa: float
    total: float
    audio_s: float

    @property
    def rtf(self) -> float:
        return self.total / self.audio_s


def timed(chunks: Iterable[np.ndarray], rate: int) -> Timed:
    start = time.perf_counter()
    first, samples = None, 0
    for audio in chunks:
        if first is None and audio.size:
            first = time.perf_counter() - start
        samples += audio.size
    total = time.perf_counter() - start
    return Timed(first if first is not None else total, total, samples / rate)


def ours(engine: PiperEngine, text: str) -> Iterator[np.ndarray]:
    for chunk in engine.synthesize(text, SynthesisOptions(seed=SEED)):
        yield chunk.audio


def theirs(voice, text: str) -> Iterator[np.ndarray]:  # type: ignore[no-untyped-def]
    for chunk in voice.synthesize(text):
        yield chunk.audio_float_array


def load_piper(threads: int | None):  # type: ignore[no-untyped-def]
    """piper-tts's voice, its onnxruntime session with our thread count."""
    import onnxruntime as ort
    from piper import PiperVoice

    voice = PiperVoice.load(default_voice())
    if threads:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        voice.session = ort.InferenceSession(
            str(default_voice()), so, providers=["CPUExecutionProvider"]
        )
    return voice


def median(runs: list[Timed]) -> Timed:
    return Timed(
        float(np.median([r.ttfa for r in runs])),
        float(np.median([r.total for r in runs])),
        runs[0].audio_s,
    )


def bench_cpu(bundle: Bundle, threads: int | None, rounds: int = 1) -> None:
    voice = load_piper(threads)
    with open_engine(bundle, "cpu", threads=threads, warmup=True) as loaded:
        engine, runners = loaded
        list(theirs(voice, "Hello."))
        rate = engine.sample_rate
        print("== CPU: hexvoice piper-vits (onnxruntime CPU backend) vs piper-tts ==")
        print(
            f"{'audio s':>7} | {'ours TTFA':>9} {'RTF':>6} | {'piper TTFA':>10} "
            f"{'RTF':>6} | text"
        )
        rows = []
        for text in (*SENTENCES, PARAGRAPH):
            pairs = [
                (timed(ours(engine, text), rate), timed(theirs(voice, text), rate))
                for _ in range(rounds)
            ]
            a, b = median([p[0] for p in pairs]), median([p[1] for p in pairs])
            rows.append((a, b))
            label = "(all ten as one paragraph)" if text is PARAGRAPH else text[:34]
            print(
                f"{a.audio_s:7.2f} | {a.ttfa:9.3f} {a.rtf:6.3f} | {b.ttfa:10.3f} "
                f"{b.rtf:6.3f} | {label}",
                flush=True,
            )
        each = rows[:-1]
        ours_rtf = np.mean([a.rtf for a, _ in each])
        piper_rtf = np.mean([b.rtf for _, b in each])
        ours_ttfa = np.mean([a.ttfa for a, _ in each])
        piper_ttfa = np.mean([b.ttfa for _, b in each])
        print(
            f"mean over sentences: ours TTFA {ours_ttfa:.3f} s RTF {ours_rtf:.3f}; "
            f"piper TTFA {piper_ttfa:.3f} s RTF {piper_rtf:.3f}; "
            f"RTF ratio {ours_rtf / piper_rtf:.2f}x, "
            f"TTFA ratio {ours_ttfa / piper_ttfa:.2f}x"
        )
        stages = {k: r.stats for k, r in runners.items() if r.stats.calls}
        per_call = (
            f"{k} {s.seconds / s.calls * 1e3:.1f} ms x{s.calls}"
            for k, s in stages.items()
        )
        print("ours, graph time per call: " + ", ".join(per_call))


def bench_graphs(bundle: Bundle) -> None:
    print(f"== QNN backend, one call per graph ({bundle.target}) ==", flush=True)
    host = GraphHost("qnn")
    try:
        (runners,) = host.open([bundle])
        for key, runner in runners.items():
            feeds = {
                t.name: np.zeros(t.shape, np.dtype(t.dtype)) for t in runner.inputs
            }
            start = time.perf_counter()
            runner.run(feeds)
            wall = time.perf_counter() - start
            print(f"{key:>12}: {wall:7.2f} s", flush=True)
    finally:
        host.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--sim", action="store_true", help="per-graph QNN times")
    parser.add_argument(
        "--threads", type=int, help="onnxruntime intra-op threads (both)"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs per sentence (median shown)"
    )
    args = parser.parse_args(argv)
    bundle = Bundle.load(args.bundle)
    bench_cpu(bundle, args.threads, args.rounds)
    if args.sim:
        bench_graphs(bundle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
