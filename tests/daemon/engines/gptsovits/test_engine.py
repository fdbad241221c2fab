"""The engine end to end on the test voice: streaming, determinism, re-splits,
pauses, cancellation, warm-up, bad input."""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
import threading

import numpy as np
import pytest

from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.sdk.audio.shaping import COMMA_PAUSE_S, SENTENCE_PAUSE_S
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.cancel import Cancelled, CancelToken
from daemon.sdk.graphs import GraphHost
from daemon.sdk.registry import engine_class
from daemon.sdk.tts import SynthesisOptions
from tests.cancel_after import CancelAfter

# Two sentences of ~20 spoken chars: two segments (≤ 30 chars each).
TWO_SENTENCES = (
    "今天天气很好，我们一起去公园看一看花吧。明天下雨的话，我们就在家里读书。"
)
LOG = "daemon.engines.gptsovits.engine"
_SEGMENT = re.compile(r"segment (\d+) '(.*)' \((\w+)\): (\d+) tokens")


def _audio(engine, text, **kwargs) -> np.ndarray:
    chunks = list(engine.synthesize(text, SynthesisOptions(**kwargs)))
    assert all(c.sample_rate == 32000 and c.audio.dtype == np.float32 for c in chunks)
    return np.concatenate([c.audio for c in chunks])


def _segments(caplog) -> list[tuple[int, str, str, int]]:
    found = [_SEGMENT.search(r.getMessage()) for r in caplog.records]
    return [(int(m[1]), m[2], m[3], int(m[4])) for m in found if m]


def test_registered_under_the_entry_point_group():
    # pyproject's [project.entry-points."hexvoice.engines"], as installed
    assert engine_class("gpt-sovits-v2pro") is GptSovitsEngine


def test_warmup_runs_every_graph_once(gsv_bundle: Bundle):
    host = GraphHost("cpu")
    try:
        (graphs,) = host.open([gsv_bundle])
        engine = GptSovitsEngine()
        engine.load(gsv_bundle, graphs)
        assert all(r.stats.calls == 0 for r in graphs.values())
        engine.warmup()
        assert {k: r.stats.calls >= 1 for k, r in graphs.items()} == dict.fromkeys(
            graphs, True
        )
        assert [v.name for v in engine.voices()] == ["tinyvoice"]
        assert engine.sample_rate == 32000
    finally:
        host.close()


def test_same_seed_same_bytes_other_seed_differs_on_cpu(cpu_engine):
    a = _audio(cpu_engine, TWO_SENTENCES, seed=11)
    b = _audio(cpu_engine, TWO_SENTENCES, seed=11)
    c = _audio(cpu_engine, TWO_SENTENCES, seed=12)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()
    assert np.abs(a).max() > 0.01


@pytest.mark.slow
def test_same_seed_same_bytes_other_seed_differs_on_the_simulator(sim_engine):
    """One short capped segment per run (~15 s each on the simulator)."""
    extra = {"max_new_tokens": 12}
    a = _audio(sim_engine, "好。", seed=3, extra=extra)
    b = _audio(sim_engine, "好。", seed=3, extra=extra)
    c = _audio(sim_engine, "好。", seed=4, extra=extra)
    assert len(a) == 12 * 1280 and a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()


def test_first_chunk_comes_after_one_vocoder_window(cpu_engine):
    gen = cpu_engine.loaded.vits.gen.runner
    before = gen.stats.calls
    stream = cpu_engine.synthesize("你好。", SynthesisOptions(seed=1))
    first = next(stream)
    assert gen.stats.calls == before + 1 and first.audio.size > 0
    rest = list(stream)
    assert gen.stats.calls > before + 1  # the segment had more windows to go
    assert rest[-1].end_of_segment


def test_pauses_and_fades_per_segment(cpu_engine, caplog):
    caplog.set_level(logging.DEBUG, LOG)
    chunks = list(cpu_engine.synthesize(TWO_SENTENCES, SynthesisOptions(seed=5)))
    segs = _segments(caplog)
    ends = [c for c in chunks if c.end_of_segment]
    assert len(ends) == len(segs) >= 2
    assert [c.segment for c in ends] == list(range(len(segs)))
    for index, _, end, tokens in segs:
        audio = np.concatenate([c.audio for c in chunks if c.segment == index])
        pause = 0.0 if index == len(segs) - 1 else {
            "sentence": SENTENCE_PAUSE_S, "comma": COMMA_PAUSE_S
        }[end]  # fmt: skip
        n_pause = round(pause * 32000)
        assert len(audio) == tokens * 1280 + n_pause
        assert not audio[len(audio) - n_pause :].any()
        speech = audio[: len(audio) - n_pause]
        # raised-cosine edges: the first and last samples are faded to ~0
        assert abs(speech[0]) < 0.02 * np.abs(speech).max()
        assert abs(speech[-1]) < 0.02 * np.abs(speech).max()
    # both pause kinds occur before the last segment
    assert {end for _, _, end, _ in segs[:-1]} == {"sentence", "comma"}


def test_a_segment_at_the_token_cap_is_resplit_not_truncated(cpu_engine, caplog):
    caplog.set_level(logging.DEBUG, LOG)
    text = "今天天气很好，我们一起去看一看吧。"
    resplits = cpu_engine.stats.resplits
    audio = _audio(cpu_engine, text, seed=2, extra={"max_new_tokens": 12})
    assert cpu_engine.stats.resplits > resplits
    assert "re-splitting" in caplog.text
    segs = _segments(caplog)
    assert len(segs) > 1
    spoken = "".join(t for _, t, _, _ in segs)
    # every char is spoken, in order, once (halves may gain a "，" or "。")
    assert re.sub(r"[，。]", "", spoken) == re.sub(r"[，。]", "", text)
    assert all(n <= 12 for *_, n in segs)
    assert len(audio) >= sum(n for *_, n in segs) * 1280


def test_cancel_mid_utterance_stops_within_one_graph_call(cpu_engine):
    runners = _runners(cpu_engine).values()

    def calls() -> int:
        return sum(r.stats.calls for r in runners)

    reference = _audio(cpu_engine, TWO_SENTENCES, seed=8)
    token = CancelToken()
    started, outcome = threading.Event(), {}

    def consume() -> None:
        try:
            for _ in cpu_engine.synthesize(
                TWO_SENTENCES, SynthesisOptions(seed=8), token
            ):
                started.set()
        except Cancelled as exc:
            outcome["cancelled"] = exc
        finally:
            started.set()

    worker = threading.Thread(target=consume)
    worker.start()
    assert started.wait(60)
    at_cancel = calls()
    token.cancel("client went away")
    worker.join(60)
    assert not worker.is_alive()
    assert "client went away" in str(outcome.get("cancelled"))
    assert calls() - at_cancel <= 1
    # the engine is reusable and a request does not depend on the cancelled one
    assert _audio(cpu_engine, TWO_SENTENCES, seed=8).tobytes() == reference.tobytes()


def test_cancel_during_g2pw_stops_within_one_graph_call(cpu_engine):
    runners = _runners(cpu_engine)
    before = {k: r.stats.calls for k, r in runners.items()}
    # ten polyphones in one segment: two g2pw calls (8 rows each) before BERT
    text = "好看好看好看好看好看。"
    with pytest.raises(Cancelled, match="test"):
        list(cpu_engine.synthesize(text, SynthesisOptions(seed=1), CancelAfter(2)))
    ran = {k: r.stats.calls - before[k] for k, r in runners.items()}
    assert ran == {k: int(k == "g2pw") for k in runners}  # the first g2pw call only
    # the stage needed two calls (so the cancel came between them), and nothing
    # was left on the graph: without a token the same text phonemizes to the end
    uncancelled = runners["g2pw"].stats.calls
    cpu_engine.loaded.text.phonemize(text)
    assert runners["g2pw"].stats.calls - uncancelled == 2


@pytest.mark.parametrize(
    "text,kwargs,match",
    [
        ("   ", {}, "empty"),
        ("你好。", {"extra": {"noise_w": 1}}, r"unknown field\(s\) \['noise_w'\]"),
        ("你好。", {"extra": {"top_k": 0}}, "top_k must be >= 1"),
        ("你好。", {"extra": {"max_new_tokens": 0}}, "max_new_tokens: expected"),
        ("你好。", {"extra": {"max_new_tokens": 10**6}}, "max_new_tokens: expected"),
    ],
)
def test_bad_requests_fail_before_any_graph_call(cpu_engine, text, kwargs, match):
    before = {k: r.stats.calls for k, r in _runners(cpu_engine).items()}
    with pytest.raises(ValueError, match=match):
        cpu_engine.synthesize(text, SynthesisOptions(**kwargs))
    assert {k: r.stats.calls for k, r in _runners(cpu_engine).items()} == before


def _runners(engine):
    s = engine.loaded
    out = {b.runner.key: b.runner for b in s.t2s.buckets.values()}
    out["prefill"] = s.t2s.prefill_graph.runner
    out["g2pw"], out["bert"] = s.text.g2pw.runner, s.text.bert.runner
    out["gen"], out["enc"] = s.vits.gen.runner, s.vits.enc.runner
    return out


def test_bad_bundles_fail_at_load_naming_the_problem(gsv_bundle, tmp_path):
    host = GraphHost("cpu")
    try:
        (graphs,) = host.open([gsv_bundle])
        other = dataclasses.replace(gsv_bundle, engine="piper-vits")
        with pytest.raises(BundleError, match="not 'gpt-sovits-v2pro'"):
            GptSovitsEngine().load(other, graphs)
        partial = {k: g for k, g in graphs.items() if k != "vits_gen"}
        with pytest.raises(BundleError, match="vits_gen"):
            GptSovitsEngine().load(gsv_bundle, partial)
        params = {**gsv_bundle.params, "width": 65}
        with pytest.raises(BundleError, match="params"):
            GptSovitsEngine().load(
                dataclasses.replace(gsv_bundle, params=params), graphs
            )
        small = gsv_bundle.params["kv_buckets"][0]
        params = {**gsv_bundle.params, "kv_buckets": [small]}
        large = f"t2s_decode_{gsv_bundle.params['kv_buckets'][-1]}"
        small_graphs = {k: g for k, g in graphs.items() if k != large}
        with pytest.raises(BundleError, match="exceed the largest KV bucket"):
            GptSovitsEngine().load(
                dataclasses.replace(gsv_bundle, params=params), small_graphs
            )
        root = tmp_path / "copy"
        shutil.copytree(gsv_bundle.root, root, ignore=shutil.ignore_patterns("*.bin"))
        (root / "cpu" / "t2s_pe.npy").unlink()
        with pytest.raises(BundleError, match="missing cpu/t2s_pe.npy"):
            GptSovitsEngine().load(dataclasses.replace(gsv_bundle, root=root), graphs)
    finally:
        host.close()
    with pytest.raises(RuntimeError, match="load"):
        GptSovitsEngine().synthesize("你好。")
