"""Piper's NPU decoder windows, before -> after: recompute and first audio.

    python -m scripts.bench.piper.windows [--work DIR] [--rounds N]

Runs the NPU path (static buckets and windows: daemon/engines/piper/pipeline.py)
over the joe voice's own static graphs on onnxruntime's CPU provider (the ONNX
the converter compiles for the HTP; the binaries have the same I/O), once with
the former single 96-frame window and once with the converter's defaults
(scripts/piper/convert.py: a small first window, steady windows within the
VTCM, tails in the smallest size that covers them), interleaved per sentence
over the ten oracle sentences. Prints per schedule:
- frames computed per frame kept by the decoder (windows.py `cost`);
- mean TTFA measured here (CPU, static graphs), and mean board TTFA, an
  ESTIMATE: scripts/bench/latency_model/estimate.py `estimate` of each graph call made
  before the first chunk (encoder, flow window, first decoder window; the numpy
  SDP on the host is not in it), plus the estimated decoder seconds per sentence.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

BEFORE_WINDOW = 96  # the one window of bundles built before first/steady sizes


@dataclass(frozen=True)
class Schedule:
    name: str
    window: int
    first: int | None
    sizes: tuple[int, ...]


def schedules() -> tuple[Schedule, Schedule]:
    from scripts.piper.convert import ConvertOptions

    o = ConvertOptions()
    return (
        Schedule(f"before W{BEFORE_WINDOW}", BEFORE_WINDOW, None, ()),
        Schedule(
            f"after first {o.first_window}, steady {o.window}, tails "
            f"{'/'.join(map(str, o.window_sizes))}",
            o.window,
            o.first_window,
            o.window_sizes,
        ),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path(".cache/piper-windows"))
    ap.add_argument("--rounds", type=int, default=1, help="median TTFA over rounds")
    args = ap.parse_args(argv)

    import onnx

    from daemon.engines.piper.params import Scales
    from daemon.engines.piper.pipeline import PiperGraphs
    from daemon.engines.piper.text import PiperText
    from scripts.bench.latency_model.estimate import estimate
    from scripts.bench.piper import static
    from scripts.piper import graphs
    from scripts.piper.convert import ConvertOptions
    from scripts.piper.oracle import SENTENCES

    voice = static.demo_voice()
    model, cuts, hop = voice.model, voice.cuts, voice.hop
    opts = ConvertOptions()
    plans = schedules()
    keys = {f"enc_P{p}": ("enc", p) for p in opts.phoneme_buckets}
    keys |= {f"flow_F{f}": ("flow", f) for f in opts.frame_buckets}
    for s in plans:
        for w in {s.window, s.first or s.window, *s.sizes}:
            keys[f"dec_W{w}"] = ("dec", w)
    args.work.mkdir(parents=True, exist_ok=True)
    runners, board = {}, {}
    for key, (kind, size) in keys.items():
        path = args.work / f"{key}.onnx"
        if not path.is_file():
            if kind == "enc":
                g = graphs.encoder(model, cuts, size)
            elif kind == "flow":
                g = graphs.flow(model, cuts, size)
            else:
                g = graphs.decoder_window(model, cuts, size, hop)
            onnx.save(g, path)
        runners[key] = static.cpu_runner(key, path)
        board[key] = estimate(path).seconds
    ctx = graphs.flow_context(graphs.flow(model, cuts, opts.frame_buckets[0]))
    base = static.params(voice, opts, ctx)
    sdp = static.duration_predictor(voice)
    pipes = {}
    for s in plans:
        params = replace(
            base, window=s.window, first_window=s.first, window_sizes=s.sizes
        )
        pipes[s.name] = PiperGraphs(params, runners, sdp)
        pipes[s.name].warmup()
    text = PiperText(base, pipes[plans[0].name].max_ids)
    scales = Scales(base.noise_scale, base.length_scale, base.noise_w)

    def calls() -> Counter[str]:
        return Counter({k: r.stats.calls for k, r in runners.items()})

    rows: dict[str, list[tuple[float, float, float, int, int]]] = {
        s.name: [] for s in plans
    }
    for sentence in SENTENCES:
        ids = [p.ids for p in text.pieces(sentence)][0]
        for s in plans:  # interleaved: both see the same machine load
            ttfas = []
            for _ in range(args.rounds):
                before = calls()
                t0 = time.perf_counter()
                stream = pipes[s.name].stream(ids, scales, np.random.default_rng(0))
                first = next(stream)
                ttfas.append(time.perf_counter() - t0)
                at_first = calls() - before
                samples = first.size + sum(x.size for x in stream)
                made = calls() - before
            dec = {k: v for k, v in made.items() if k.startswith("dec_W")}
            computed = sum(int(k[5:]) * v for k, v in dec.items())
            board_ttfa = sum(board[k] * v for k, v in at_first.items())
            board_dec = sum(board[k] * v for k, v in dec.items())
            rows[s.name].append(
                (
                    float(np.median(ttfas)),
                    board_ttfa,
                    board_dec,
                    computed,
                    samples // hop,
                )
            )
    print(
        "Piper NPU decoder windows, static graphs on onnxruntime CPU; board = "
        "ESTIMATE (scripts/bench/latency_model/estimate.py, graphs only)"
    )
    for s in plans:
        r = np.array(rows[s.name], dtype=float)
        print(
            f"  {s.name:<40} frames computed/kept {r[:, 3].sum() / r[:, 4].sum():.3f}"
            f" | TTFA cpu {r[:, 0].mean() * 1e3:7.1f} ms"
            f" | board ESTIMATE TTFA {r[:, 1].mean() * 1e3:6.1f} ms,"
            f" decoder {r[:, 2].mean() * 1e3:6.1f} ms/sentence"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
