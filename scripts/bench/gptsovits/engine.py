"""Benchmark the gpt-sovits-v2pro engine.

    python -m scripts.bench.gptsovits.engine [--voice DIR] [--backend cpu qnn]
        [--steps N]

1. The test voice (``scripts/tiny-gptsovits --out DIR``, built if missing) on
   each backend: per-stage times (every graph, the host's frontend and T2S
   loop), RTF, and time to the first audio chunk next to time to the first
   complete segment (what per-sentence streaming would give).
2. The text frontend per ~30-char sentence, excluding the g2pw graph's time.
3. Host time per T2S decode step (sampling, embedding, K/V write-back, mask,
   Python and qnnrt overhead: everything but the graph's execute) with
   full-size GPT-SoVITS buffers: 24 layers x 16 heads x KV 1024 x 32, fp16,
   through stand-in graphs of exactly that I/O (scripts/bench/gptsovits/standin.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.engines.gptsovits.layout import GsvParams
from daemon.engines.gptsovits.options import default_sampling
from daemon.engines.gptsovits.sampling import TokenSampler
from daemon.engines.gptsovits.t2s import T2S
from daemon.engines.gptsovits.tables import CpuTables
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.graphs import GraphHost
from daemon.sdk.tts import SynthesisOptions
from scripts.bench import timing

SEED = 1
TEXT = "今天天气很好，我们一起去公园看一看花吧。明天下雨的话，我们就在家里读书。"
SIM_TEXT = "你好，世界。"  # the simulator needs seconds per vocoder window
SIM_MAX_TOKENS = 24
# ~30 spoken chars each, numbers/dates/English mixed in (frontend bench)
FRONTEND_SENTENCES = (
    "今天是2026年9月26日，天气晴朗，我们去公园散步吧。",
    "这个行业的发展很快，长期来看还是重要的机会。",
    "我用Python写了一个小程序，运行速度提高了百分之三十。",
    "他的电话号码是13812345678，请在下午三点以前联系。",
    "银行的利率上调了0.25个百分点，很多人开始重新考虑。",
    "我们一起去看一看吧，好久没有这么开心地玩儿了。",
)
# Host-loop bench: a typical prompt (3-10 s reference) and a full segment.
FULL_PHONES, FULL_PROMPT, FULL_STEPS = 60, 150, 250
TARGET_HOST_MS, TARGET_FRONTEND_MS = 0.3, 20.0


def open_engine(bundle: Bundle, backend: str) -> tuple[GraphHost, GptSovitsEngine]:
    host = GraphHost(backend)
    (graphs,) = host.open([bundle])
    engine = GptSovitsEngine()
    engine.load(bundle, graphs)
    t0 = time.perf_counter()
    engine.warmup()
    print(f"  warm-up {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return host, engine


def runners(engine: GptSovitsEngine) -> dict:
    s = engine.loaded
    out = {"g2pw": s.text.g2pw.runner, "bert": s.text.bert.runner}
    out["t2s_prefill"] = s.t2s.prefill_graph.runner
    out.update({b.runner.key: b.runner for b in s.t2s.buckets.values()})
    out["vits_enc"], out["vits_gen"] = s.vits.enc.runner, s.vits.gen.runner
    return out


def reset(engine: GptSovitsEngine) -> None:
    for r in runners(engine).values():
        r.stats.calls, r.stats.seconds = 0, 0.0
    engine.stats.frontend_seconds = 0.0
    engine.loaded.t2s.stats.reset()


def bench_voice(bundle: Bundle, backend: str, text: str, max_tokens: int | None):
    print(f"\n== test voice on {backend}: {text!r}", file=sys.stderr)
    host, engine = open_engine(bundle, backend)
    try:
        reset(engine)
        extra = {"max_new_tokens": max_tokens} if max_tokens else {}
        start = time.perf_counter()
        first = first_segment = None
        samples = windows = 0
        for chunk in engine.synthesize(text, SynthesisOptions(seed=SEED, extra=extra)):
            now = time.perf_counter() - start
            if first is None and chunk.audio.size:
                first = now
            if first_segment is None:
                windows += not chunk.end_of_segment
                if chunk.end_of_segment:
                    first_segment = now
            samples += chunk.audio.size
        total = time.perf_counter() - start
        audio_s = samples / engine.sample_rate
        stats = engine.loaded.t2s.stats
        g2pw_s = runners(engine)["g2pw"].stats.seconds
        print(f"{'stage':<18}{'calls':>6}{'total s':>10}{'ms/call':>10}")
        for key, r in runners(engine).items():
            per = 1e3 * r.stats.seconds / max(r.stats.calls, 1)
            print(f"{key:<18}{r.stats.calls:>6}{r.stats.seconds:>10.3f}{per:>10.2f}")
        host_fe = engine.stats.frontend_seconds - g2pw_s
        print(f"{'frontend (host)':<18}{'':>6}{host_fe:>10.3f}")
        host_t2s = stats.step_seconds - stats.graph_seconds
        print(
            f"{'T2S loop (host)':<18}{stats.steps:>6}{host_t2s:>10.3f}"
            f"{1e3 * stats.host_seconds_per_step:>10.3f}"
        )
        print(
            f"audio {audio_s:.2f} s in {total:.2f} s: RTF {total / audio_s:.3f}; "
            f"first chunk {first:.3f} s vs first full segment {first_segment:.3f} s "
            f"({windows} vocoder chunks in it)"
        )
    finally:
        engine.close()
        host.close()


class _ThreadTimed:
    """Wraps the g2pw runner: its calls' thread CPU time, to subtract."""

    def __init__(self, runner) -> None:  # type: ignore[no-untyped-def]
        self.runner, self.cpu = runner, 0.0

    def run(self, feeds):  # type: ignore[no-untyped-def]
        t0 = time.thread_time()
        try:
            return self.runner.run(feeds)
        finally:
            self.cpu += time.thread_time() - t0


def bench_frontend(bundle: Bundle) -> None:
    """Wall time and this thread's CPU time (robust on a busy machine) per
    sentence; onnxruntime runs the g2pw graph on this thread (threads=1)."""
    print("\n== text frontend (host only; g2pw graph subtracted)", file=sys.stderr)
    host = GraphHost("cpu", threads=1)
    try:
        (graphs,) = host.open([bundle])
        engine = GptSovitsEngine()
        engine.load(bundle, graphs)
        engine.warmup()
        text = engine.loaded.text
        g2pw = text.g2pw
        g2pw.runner = timed = _ThreadTimed(g2pw.runner)
        wall, cpu = [], []
        for _ in range(3):
            for sentence in FRONTEND_SENTENCES:
                g_wall, g_cpu = timed.runner.stats.seconds, timed.cpu
                t0, c0 = time.perf_counter(), time.thread_time()
                for segment in text.split(sentence):
                    text.phonemize(segment.text)
                c1, t1 = time.thread_time(), time.perf_counter()
                wall.append(1e3 * (t1 - t0 - (timed.runner.stats.seconds - g_wall)))
                cpu.append(1e3 * (c1 - c0 - (timed.cpu - g_cpu)))
        print(
            f"frontend per ~30-char sentence: wall median {np.median(wall):.2f} ms "
            f"(max {max(wall):.2f}), CPU median {np.median(cpu):.2f} ms (max "
            f"{max(cpu):.2f}); target <= {TARGET_FRONTEND_MS} ms"
        )
    finally:
        host.close()


def full_params() -> GsvParams:
    """GPT-SoVITS v2Pro's T2S at the reference port's graph sizes."""
    return GsvParams(
        width=512, layers=24, heads=16, head_dim=32, vocab=1025, eos=1024,
        phone_vocab=732, prefill_len=512, kv_buckets=(1024,), max_new_tokens=250,
        vits_frames=500, vits_phones=128, vits_hidden=192, ssl_dim=768, gin=1024,
        hop=640, gen_window=96, gen_overlap=12, noise_scale=0.5, bert_tokens=128,
        bert_dim=1024, g2pw_rows=8, g2pw_tokens=64, mask_value=-100.0, top_k=15,
        top_p=1.0, temperature=1.0, repetition_penalty=1.35, eos_block_steps=11,
    )  # fmt: skip


def random_tables(p: GsvParams, rng: np.random.Generator) -> CpuTables:
    def r(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    return CpuTables(
        text_emb=r(p.phone_vocab, p.width),
        bert_w=r(p.width, p.bert_dim),
        bert_b=r(p.width),
        audio_emb=r(p.vocab, p.width),
        text_pe=r(4000, p.width),
        audio_pe=r(4000, p.width),
        predict=r(p.vocab, p.width),
        vits_text_emb=r(p.phone_vocab, p.vits_hidden),
        codebook=r(p.eos, p.ssl_dim),
    )


def standin_bundle(root: Path, backend: str) -> Bundle:
    from scripts.bench.gptsovits.standin import decode_graph, prefill_graph
    from scripts.bench.standin import compile_graphs
    from scripts.common import bundling

    p = full_params()
    onnx_files = {
        "t2s_prefill": prefill_graph(root / "onnx_src" / "t2s_prefill.onnx", p),
        f"t2s_decode_{p.kv_buckets[-1]}": decode_graph(
            root / "onnx_src" / "decode.onnx", p
        ),
    }
    return bundling.finish(
        root / "bundle", engine="bench-standin", name="standin", sample_rate=32000,
        languages=("zh",), graphs=compile_graphs(root, onnx_files),
    )  # fmt: skip


def bench_host_step(backend: str, steps: int) -> None:
    print(f"\n== T2S host time per step, full-size buffers, {backend}", file=sys.stderr)
    p = full_params()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="bench_engine_") as tmp:
        bundle = standin_bundle(Path(tmp), backend)
        host = GraphHost(backend)
        try:
            (graphs,) = host.open([bundle])
            t2s = T2S(p, random_tables(p, rng), graphs)
            t2s.warmup()
            phones = rng.integers(0, p.phone_vocab, FULL_PHONES)
            bert = (rng.standard_normal((FULL_PHONES, p.bert_dim)) * 0.1).astype(
                np.float32
            )
            prompt = rng.integers(0, p.eos, FULL_PROMPT)
            # EOS blocked throughout, so every run decodes exactly `steps` steps
            cfg = replace(default_sampling(p), eos_block_steps=steps + 1)
            TokenSampler(cfg, p.vocab, prompt, rng).warmup()  # numba compile
            t2s.stats.reset()
            t2s.stats.host_steps = []
            for seed in range(3):
                sampler = TokenSampler(
                    cfg, p.vocab, prompt, np.random.default_rng(seed)
                )
                t2s.generate(phones, bert, prompt, sampler, steps)
            host_ms = 1e3 * np.array(t2s.stats.host_steps)
            graph_ms = 1e3 * t2s.stats.graph_seconds / max(t2s.stats.steps, 1)
            sampler = TokenSampler(cfg, p.vocab, prompt, np.random.default_rng(9))
            logits = rng.standard_normal(p.vocab).astype(np.float32)
            alone = timing.alone(lambda _i: sampler.step(logits), steps)
            sample_ms = 1e3 * float(np.median(alone))
        finally:
            host.close()
    p50, p90 = np.percentile(host_ms, [50, 90])
    print(
        f"host per decode step: median {p50:.3f} ms, p90 {p90:.3f} ms, mean "
        f"{host_ms.mean():.3f} ms (target <= {TARGET_HOST_MS} ms; sampling alone "
        f"{sample_ms:.3f} ms); graph execute {graph_ms:.2f} ms/step "
        f"({len(host_ms)} steps, KV 1024, fp16 K/V)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.gptsovits.engine")
    parser.add_argument("--voice", type=Path, help="make_test_voice --out DIR")
    parser.add_argument("--backend", nargs="+", default=["cpu", "qnn"])
    parser.add_argument("--steps", type=int, default=FULL_STEPS)
    parser.add_argument("--text", default=TEXT)
    parser.add_argument("--sim-text", default=SIM_TEXT)
    parser.add_argument("--sim-max-tokens", type=int, default=SIM_MAX_TOKENS)
    args = parser.parse_args(argv)
    voice = args.voice or Path(tempfile.gettempdir()) / "hexvoice-test-voice"
    from scripts.gptsovits.synthetic.build import make_test_voice

    bundle = Bundle.load(make_test_voice(voice, sim_gates=False))
    bench_frontend(bundle)
    for backend in args.backend:
        bench_host_step(backend, args.steps)
    for backend in args.backend:
        if backend == "qnn":
            bench_voice(bundle, backend, args.sim_text, args.sim_max_tokens)
        else:
            bench_voice(bundle, backend, args.text, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
