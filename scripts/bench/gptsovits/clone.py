"""Benchmark a GPT-SoVITS zero-shot registration (time to clone a voice).

    python -m scripts.bench.gptsovits.clone [--voice DIR] [--backend cpu qnn]
        [--repeat N]

1. The tiny test voice built with the four reference graphs
   (``scripts/tiny-gptsovits --zero-shot --out DIR``, built if missing) on each
   backend: the time ``clone`` takes for a 3.2 s clip the voice itself spoke
   (mean and best of ``--repeat``), split into each reference graph's time per
   call (the runners' own stats: ``cpu`` is onnxruntime, ``qnn`` the x86 HTP
   simulator, slow and not a board time) and the rest (resampling, fbank,
   spectrogram, frontend, bert: host side).
2. A board paper estimate of each reference graph from the board latency
   model (``scripts/bench/latency_model/estimate.py`` ``predict``), at full size
   (``--full``: upstream-sized random-weight graphs, exported once to
   ``--work``: chinese-hubert-base's layout, the published ERes2NetV2, s2v2Pro
   SoVITS, FULL_REFERENCE windows), else on the tiny bundle's ONNX files;
   "estimate" in every title.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from daemon.engines.gptsovits.layout import REFERENCE_GRAPHS
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.local import open_engine
from daemon.sdk.tts import SynthesisOptions
from scripts.bench import timing

DEFAULT_VOICE = Path(".cache/gsv-clone-voice")
#: the clip: what the test voice says, cut to a length whose prompt fits the
#: tiny prefill (tests/daemon/service/cloning/test_gsv_voices.py too)
SPOKEN, TRANSCRIPT, CLIP_SECONDS, SEED = "你好。你好。", "你好。", 3.2, 3


def clip_of(engine, rate: int) -> np.ndarray:
    chunks = engine.synthesize(SPOKEN, SynthesisOptions(seed=SEED))
    audio = np.concatenate([c.audio for c in chunks])
    return audio[: round(CLIP_SECONDS * rate)].astype(np.float32)


def bench_backend(bundle: Bundle, backend: str, clip: np.ndarray, repeat: int) -> dict:
    with open_engine(bundle, backend) as (engine, graphs):
        before = {k: (graphs[k].stats.calls, graphs[k].stats.seconds)
                  for k in REFERENCE_GRAPHS}  # fmt: skip
        rate = bundle.sample_rate
        times = timing.alone(
            lambda _i: engine.clone(clip, rate, TRANSCRIPT, language="zh"), repeat
        )
        per_graph = {}
        for k in REFERENCE_GRAPHS:
            calls = graphs[k].stats.calls - before[k][0]
            seconds = graphs[k].stats.seconds - before[k][1]
            per_graph[k] = seconds / calls if calls else float("nan")
    graph_total = sum(per_graph.values())
    return {
        "first": times[0],  # the frontend's lazy tables load here
        "best": float(np.min(times)),
        "graphs": per_graph,
        "host": float(np.min(times)) - graph_total,
    }


def full_size_onnx(work: Path) -> dict[str, Path]:
    """The four reference graphs at upstream's sizes, random weights (only MACs
    and bytes matter to the latency model); exported once into ``work``."""
    paths = {key: work / f"{key}.onnx" for key in REFERENCE_GRAPHS}
    if all(p.is_file() for p in paths.values()):
        return paths
    import torch
    from transformers import HubertConfig, HubertModel

    from scripts.bench.latency_model.full_size.gptsovits import SOVITS_WEIGHTS
    from scripts.gptsovits.export.hubert import export_hubert
    from scripts.gptsovits.export.reference import export_reference
    from scripts.gptsovits.models.eres2net import Eres2NetDims
    from scripts.gptsovits.models.sovits import SovitsDims, SovitsModel
    from scripts.gptsovits.shapes import FULL_REFERENCE
    from scripts.gptsovits.synthetic.sv import random_sv
    from scripts.gptsovits.synthetic.voice import s2v2pro_hparams

    torch.manual_seed(0)
    work.mkdir(parents=True, exist_ok=True)
    dims = SovitsDims.from_hparams(s2v2pro_hparams(), **SOVITS_WEIGHTS)
    sovits = SovitsModel(dims).eval()
    hubert = HubertModel(HubertConfig(conv_bias=False)).eval()  # hubert-base
    export_hubert(hubert, sovits, FULL_REFERENCE, work)
    export_reference(
        sovits, random_sv(0, Eres2NetDims.published()), FULL_REFERENCE, work
    )
    return paths


def board_estimates(onnx: dict[str, Path]) -> dict[str, float] | None:
    try:
        from scripts.bench.latency_model.estimate import predict
    except ImportError:
        return None
    return {key: predict(path).seconds for key, path in onnx.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.bench.gptsovits.clone")
    p.add_argument("--voice", type=Path, default=DEFAULT_VOICE)
    p.add_argument("--backend", nargs="+", default=["cpu"], choices=["cpu", "qnn"])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--full", action="store_true", help="board estimate at full size")
    p.add_argument("--work", type=Path, default=Path("/tmp/hexvoice-gsv-clone-bench"))
    a = p.parse_args(argv)
    from scripts.gptsovits.synthetic.build import make_test_voice

    bundle = Bundle.load(make_test_voice(a.voice, sim_gates=False, zero_shot=True))
    with open_engine(bundle, "cpu") as (engine, _):
        clip = clip_of(engine, bundle.sample_rate)
    print(f"registration of a {CLIP_SECONDS} s clip ({bundle.name}, tiny shapes)")
    for backend in a.backend:
        repeat = a.repeat if backend == "cpu" else 1  # the simulator: minutes
        r = bench_backend(bundle, backend, clip, repeat)
        print(f"  {backend}: first {r['first']:.3f} s, best of {repeat} "
              f"{r['best']:.3f} s (host side {r['host']:.3f} s)")  # fmt: skip
        for key, s in r["graphs"].items():
            print(f"    {key:<10} {s * 1000:10.1f} ms/call")
    if a.full:
        onnx, size = full_size_onnx(a.work), "full size, random weights"
    else:
        onnx = {k: bundle.path(f"onnx/{k}.onnx") for k in REFERENCE_GRAPHS}
        size = "tiny shapes"
    est = board_estimates(onnx)
    if est is None:
        print(
            "board estimate: scripts/bench/latency_model/estimate.py is not here "
            "(skipped)"
        )
    else:
        print(f"board latency estimate (paper model, {size}):")
        for key, s in est.items():
            print(f"    {key:<10} {s * 1000:10.3f} ms (estimate)")
        print(f"    {'total':<10} {sum(est.values()) * 1000:10.3f} ms (estimate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
