"""Host time per graph call, excluding the graph itself, with full-size buffers.

    python -m scripts.bench.piper.host piper [--sentences N]
    python -m scripts.bench.piper.host t2s --bundle DIR

piper: the NPU path (static buckets and windows: buffer fills, masks, the lazy
flow, slicing) over the joe voice's own full-size graphs, which run here on
onnxruntime (the ONNX the converter compiles for the HTP; the NPU binary has
the same I/O). Per decoder window: wall time of the window's work minus the
time inside the graph calls it made (Runner.last_execute_s), the encoder, SDP
and length regulation counted once per sentence apart.
t2s: a GPT-SoVITS bundle's T2S decode loop, host seconds per step (T2SStats:
step time minus graph time; sampling, embedding, KV bookkeeping).
Targets (small next to graph time): <= 1 ms per Piper window, <= 0.3 ms per
T2S step.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Final

import numpy as np

PIPER_WINDOW_MS: Final = 1.0
T2S_STEP_MS: Final = 0.3


def piper(sentences: int) -> list[float]:
    """Host ms per decoder window (median over windows), per the static path."""
    import onnx
    import onnxruntime as ort

    from daemon.engines.piper.cpu import DurationPredictor
    from daemon.engines.piper.params import Scales, dec_key, enc_key, flow_key
    from daemon.engines.piper.pipeline import PiperGraphs
    from daemon.engines.piper.text import PiperText
    from daemon.sdk.bundles.manifest import TensorSpec
    from daemon.sdk.graphs import CpuRunner
    from scripts.piper import graphs
    from scripts.piper.convert import ConvertOptions, read_config
    from scripts.piper.cuts import find_cuts
    from scripts.piper.oracle import SENTENCES, default_voice
    from scripts.piper.sdp_export import sdp_weights

    voice = default_voice()
    model = onnx.load(voice)
    cuts, hop, c = find_cuts(model), graphs.hop_length(model), graphs.channels(model)
    opts = ConvertOptions()
    built = {enc_key(p): graphs.encoder(model, cuts, p) for p in opts.phoneme_buckets}
    built |= {flow_key(f): graphs.flow(model, cuts, f) for f in opts.frame_buckets}
    built[dec_key(opts.window)] = graphs.decoder_window(model, cuts, opts.window, hop)
    runners = {}
    for key, g in built.items():
        sess = ort.InferenceSession(
            g.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        spec = _Spec(
            tuple(
                TensorSpec(a.name, "float32", tuple(a.shape)) for a in sess.get_inputs()
            ),
            tuple(
                TensorSpec(a.name, "float32", tuple(a.shape))
                for a in sess.get_outputs()
            ),
        )
        runners[key] = CpuRunner(key, sess, spec)
    params = _params(
        read_config(voice),
        opts,
        hop,
        c,
        graphs.flow_context(built[flow_key(opts.frame_buckets[0])]),
    )
    sdp = DurationPredictor.from_arrays(sdp_weights(model))
    pipe = PiperGraphs(params, runners, sdp)
    text = PiperText(params, pipe.max_ids)
    pipe.warmup()
    scales = Scales(params.noise_scale, params.length_scale, params.noise_w)
    per_window: list[float] = []
    for sentence in SENTENCES[:sentences]:
        for piece in text.pieces(sentence):
            stream = pipe.stream(piece.ids, scales, np.random.default_rng(0))
            before = _graph_seconds(runners)
            t0 = time.perf_counter()
            next(stream)  # encoder, SDP, regulation, first flow + decoder window
            t1 = time.perf_counter()
            first = (t1 - t0) - (_graph_seconds(runners) - before)
            for _ in stream:
                t2 = time.perf_counter()
                graph = _graph_seconds(runners) - before
                per_window.append((t2 - t1) - graph)
                before, t1 = before + graph, t2
            print(f"  {len(piece.ids):4d} ids: first chunk host {first * 1e3:6.2f} ms")
    return [1e3 * s for s in per_window]


class _Spec:
    def __init__(self, inputs: tuple, outputs: tuple) -> None:
        self.inputs, self.outputs = inputs, outputs


def _graph_seconds(runners: dict) -> float:
    return sum(r.stats.seconds for r in runners.values())


def _params(config: dict, opts, hop: int, channels: int, ctx: int):  # type: ignore[no-untyped-def]
    from daemon.engines.piper.params import PiperParams

    inference = config.get("inference", {})
    return PiperParams(
        phoneme_type=config.get("phoneme_type", "espeak"),
        espeak_voice=config["espeak"]["voice"],
        phoneme_id_map={k: tuple(v) for k, v in config["phoneme_id_map"].items()},
        vowel_clusters=(),
        noise_scale=float(inference.get("noise_scale", 0.667)),
        length_scale=float(inference.get("length_scale", 1.0)),
        noise_w=float(inference.get("noise_w", 0.8)),
        hop=hop,
        channels=channels,
        phoneme_buckets=opts.phoneme_buckets,
        frame_buckets=opts.frame_buckets,
        flow_context=ctx,
        window=opts.window,
        overlap=opts.overlap,
        sdp="",
    )


def t2s(bundle: Path) -> list[float]:
    """Host ms per T2S decode step of a GPT-SoVITS bundle on the CPU backend."""
    from daemon.sdk.local import open_engine
    from daemon.sdk.tts import SynthesisOptions

    with open_engine(bundle, "cpu", warmup=True) as (engine, _):
        t2s_ = engine.loaded.t2s
        t2s_.stats.reset()
        t2s_.stats.host_steps = []
        for _ in engine.synthesize(
            "今天天气很好。我们去公园散步吧。", SynthesisOptions(seed=1)
        ):
            pass
        return [1e3 * s for s in t2s_.stats.host_steps]


def summary(name: str, ms: list[float], target: float) -> None:
    if not ms:
        print(f"{name}: no steps measured")
        return
    med, p90 = float(np.median(ms)), float(np.percentile(ms, 90))
    verdict = "ok" if med <= target else "OVER"
    print(
        f"{name}: host {med:.3f} ms median, {p90:.3f} ms p90 over {len(ms)} "
        f"(target <= {target} ms: {verdict})"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    sp = sub.add_parser("piper")
    sp.add_argument("--sentences", type=int, default=10)
    st = sub.add_parser("t2s")
    st.add_argument("--bundle", type=Path, required=True)
    a = p.parse_args(argv)
    if a.what == "piper":
        summary(
            "piper decoder window (static path, joe full size)",
            piper(a.sentences),
            PIPER_WINDOW_MS,
        )
    else:
        summary(f"t2s decode step ({a.bundle.name})", t2s(a.bundle), T2S_STEP_MS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
