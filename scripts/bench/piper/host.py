"""Host time per Piper decoder window, excluding the graph itself, with
full-size buffers.

    python -m scripts.bench.piper.host [--sentences N]

The NPU path (static buckets and windows: buffer fills, masks, the lazy flow,
slicing) over the joe voice's own full-size graphs, which run here on
onnxruntime (the ONNX the converter compiles for the HTP; the NPU binary has
the same I/O; scripts/bench/piper/static.py). Per decoder window: wall time of
the window's work minus the time inside the graph calls it made
(Runner.last_execute_s), the encoder, SDP and length regulation counted once
per sentence apart.  Target (small next to graph time): <= 1 ms per window.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Final

import numpy as np

from scripts.bench.timing import budget_line

PIPER_WINDOW_MS: Final = 1.0


def piper(sentences: int) -> list[float]:
    """Host ms per decoder window (median over windows), per the static path."""
    from daemon.engines.piper.params import Scales, dec_key, enc_key, flow_key
    from daemon.engines.piper.pipeline import PiperGraphs
    from daemon.engines.piper.text import PiperText
    from scripts.bench.piper import static
    from scripts.piper import graphs
    from scripts.piper.convert import ConvertOptions
    from scripts.piper.oracle import SENTENCES

    voice = static.demo_voice()
    model, cuts = voice.model, voice.cuts
    opts = ConvertOptions()
    built = {enc_key(p): graphs.encoder(model, cuts, p) for p in opts.phoneme_buckets}
    built |= {flow_key(f): graphs.flow(model, cuts, f) for f in opts.frame_buckets}
    built[dec_key(opts.window)] = graphs.decoder_window(
        model, cuts, opts.window, voice.hop
    )
    runners = {key: static.cpu_runner(key, g) for key, g in built.items()}
    ctx = graphs.flow_context(built[flow_key(opts.frame_buckets[0])])
    params = static.params(voice, opts, ctx)
    pipe = PiperGraphs(params, runners, static.duration_predictor(voice))
    text = PiperText(params, pipe.max_ids)
    pipe.warmup()
    scales = Scales(params.noise_scale, params.length_scale, params.noise_w)
    per_window: list[float] = []
    for sentence in SENTENCES[:sentences]:
        for piece in text.pieces(sentence):
            stream = pipe.stream(piece.ids, scales, np.random.default_rng(0))
            before = static.graph_seconds(runners)
            t0 = time.perf_counter()
            next(stream)  # encoder, SDP, regulation, first flow + decoder window
            t1 = time.perf_counter()
            first = (t1 - t0) - (static.graph_seconds(runners) - before)
            for _ in stream:
                t2 = time.perf_counter()
                graph = static.graph_seconds(runners) - before
                per_window.append((t2 - t1) - graph)
                before, t1 = before + graph, t2
            print(f"  {len(piece.ids):4d} ids: first chunk host {first * 1e3:6.2f} ms")
    return [1e3 * s for s in per_window]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sentences", type=int, default=10)
    a = p.parse_args(argv)
    budget_line(
        "piper decoder window (static path, joe full size)",
        piper(a.sentences),
        PIPER_WINDOW_MS,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
