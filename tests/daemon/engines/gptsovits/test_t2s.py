"""The T2S host loop against a plain torch loop over the same modules.

The torch loop is upstream's algorithm (infer_panel_naive): exact lengths, a
growing cache, boolean masks, and the transcribed sampling/stop rules.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.engines.gptsovits.sampling import SamplingConfig, TokenSampler
from daemon.engines.gptsovits.t2s import CapacityError
from tests.daemon.engines.gptsovits import upstream_sampling as up

SENTENCES = (
    "你好，世界。",
    "今天天气很好。",
    "我们一起去看一看吧！",
    "我用Python写代码，很开心。",
    "Hello world, this is a test.",
)


def t2s_inputs(engine: GptSovitsEngine, text: str):
    """phones, bert (reference + text) and prompt, as the engine builds them."""
    s = engine.loaded
    ref = s.voices[engine.default_voice]
    phonemes = s.text.phonemize(text)
    phones = np.concatenate([ref.phones, phonemes.phone_ids])
    bert = np.concatenate([ref.bert, s.text.bert_features(phonemes)])
    return phones, bert, ref.prompt, phonemes


@torch.no_grad()
def torch_generate(model, phones, bert, prompt, cfg: SamplingConfig, max_tokens: int):
    """Upstream's decode loop on the torch T2S module; (tokens, capped)."""
    n_x, n_y = len(phones), len(prompt)
    p_t, y = torch.from_numpy(phones), torch.from_numpy(prompt)[None]
    xy = torch.cat(
        [
            model.embed_text(p_t, torch.from_numpy(bert).T),
            model.embed_audio(y[0], 0),
        ],
        dim=1,
    )
    blocked = torch.zeros(n_x + n_y, n_x + n_y, dtype=torch.bool)
    blocked[:n_x, n_x:] = True
    blocked[n_x:, n_x:] = torch.ones(n_y, n_y, dtype=torch.bool).triu(1)
    past: list = [None] * model.dims.layers
    x, mask = xy, blocked
    q = torch.ones(cfg.eos + 1, dtype=torch.float64)  # greedy: q is irrelevant
    kwargs = {
        "temperature": cfg.temperature,
        "top_k": cfg.top_k,
        "top_p": cfg.top_p,
        "repetition_penalty": cfg.repetition_penalty,
    }
    tokens: list[int] = []
    for idx in range(max_tokens + 1):
        for i, block in enumerate(model.h.layers):
            x, past[i] = block.reference(x, past[i], mask)
        logits = model.ar_predict_layer(x[0, -1])[None]
        y, stop = up.decode_step(logits, y, idx, q, cfg.eos, **kwargs)
        if stop:
            return tokens, False
        tokens.append(int(y[0, -1]))
        if idx == max_tokens:
            return tokens[:max_tokens], True
        x, mask = model.embed_audio(y[0, -1:], n_y + idx), None


def test_greedy_tokens_equal_the_torch_loop(cpu_engine: GptSovitsEngine, t2s_model):
    p = cpu_engine.loaded.params
    cfg = SamplingConfig(1, 1.0, 1.0, p.repetition_penalty, p.eos, p.eos_block_steps)
    cap = cpu_engine.token_cap
    compared = 0
    for text in SENTENCES:
        phones, bert, prompt, _ = t2s_inputs(cpu_engine, text)
        sampler = TokenSampler(cfg, p.vocab, prompt, np.random.default_rng(0))
        got = cpu_engine.loaded.t2s.generate(phones, bert, prompt, sampler, cap)
        want, capped = torch_generate(t2s_model, phones, bert, prompt, cfg, cap)
        assert got.tokens.tolist() == want, text
        assert got.capped == capped
        compared += len(want)
    print(f"greedy parity: {compared} tokens over {len(SENTENCES)} sentences")
    assert compared >= 5 * 11  # at least the EOS-free steps of every sentence


def test_teacher_forced_logits_match_the_torch_module(
    cpu_engine: GptSovitsEngine, t2s_model
):
    phones, bert, prompt, _ = t2s_inputs(cpu_engine, SENTENCES[3])
    tokens = np.random.default_rng(1).integers(0, 1024, 40)
    got = cpu_engine.loaded.t2s.teacher_forced(phones, bert, prompt, tokens)
    want = t2s_model.reference_logits(
        torch.from_numpy(phones),
        torch.from_numpy(bert).T,
        torch.from_numpy(prompt),
        torch.from_numpy(tokens),
    ).numpy()
    rel = np.abs(got - want).max() / np.abs(want).max()
    assert rel < 1e-4
    assert (got.argmax(-1) == want.argmax(-1)).all()


def test_buckets_smallest_that_fits(cpu_engine: GptSovitsEngine):
    t2s = cpu_engine.loaded.t2s
    small, large = cpu_engine.loaded.params.kv_buckets
    assert t2s.bucket_for(small).length == small
    assert t2s.bucket_for(small + 1).length == large
    with pytest.raises(CapacityError, match="exceed the largest bucket"):
        t2s.bucket_for(large + 1)
    p = cpu_engine.loaded.params.prefill_len
    with pytest.raises(CapacityError, match="prefill"):
        t2s.check_fits(p, 1, 1)


def test_stale_cache_rows_do_not_leak_into_the_next_request(
    cpu_engine: GptSovitsEngine,
):
    """Rows an earlier, longer request left behind are cleared: even rows that
    would dominate the attention despite the mask (poisoned here) change
    nothing."""
    t2s = cpu_engine.loaded.t2s
    long_in = t2s_inputs(cpu_engine, SENTENCES[2])[:3]
    short_in = t2s_inputs(cpu_engine, "好。")[:3]
    tokens = np.arange(5)
    first = t2s.teacher_forced(*short_in, tokens)
    t2s.teacher_forced(*long_in, np.arange(40))
    bucket = t2s.bucket_for(len(short_in[0]) + len(short_in[2]) + len(tokens))
    start = len(short_in[0]) + len(short_in[2])
    assert bucket.filled > start + len(tokens)  # the long request used this bucket
    for name in ("k_cache", "v_cache"):
        bucket.buffers[name][:, :, start : bucket.filled] = 300.0
    np.testing.assert_array_equal(t2s.teacher_forced(*short_in, tokens), first)


# Simulator: fp16 compute and fp16 K/V; few steps, the simulator is slow.
SIM_STEPS = 16
TOP = 15


@pytest.mark.slow
def test_teacher_forced_decode_on_the_simulator(sim_engine: GptSovitsEngine, t2s_model):
    phones, bert, prompt, _ = t2s_inputs(sim_engine, SENTENCES[0])
    tokens = np.random.default_rng(4).integers(0, 1024, SIM_STEPS)
    got = sim_engine.loaded.t2s.teacher_forced(phones, bert, prompt, tokens)
    want = t2s_model.reference_logits(
        torch.from_numpy(phones),
        torch.from_numpy(bert).T,
        torch.from_numpy(prompt),
        torch.from_numpy(tokens),
    ).numpy()
    top1 = float(np.mean(got.argmax(-1) == want.argmax(-1)))
    overlap = [
        len(set(np.argsort(-g)[:TOP]) & set(np.argsort(-w)[:TOP])) / TOP
        for g, w in zip(got, want, strict=True)
    ]
    print(f"simulator teacher-forced: top-1 {top1:.3f}, min top-15 {min(overlap):.3f}")
    assert top1 >= 0.99
    assert min(overlap) >= 0.9


def _upstream_at_cap(stream: list[int], limit: int, path: str) -> list[int]:
    """The tokens TTS.py keeps when upstream's loop reaches its cap of `limit`
    iterations without EOS (AR/models/t2s_model.py; TTS.py takes
    ``pred[-idx:]`` with ``idx`` the loop index at the stop):
    - infer_panel_naive: y holds all `limit` samples, idx = limit - 1, so the
      FIRST generated token is lost;
    - infer_panel_batch_infer (TTS.run's default, parallel_infer=True):
      ``y_list[i] = y[i, :-1]`` and idx = limit - 1, so the LAST one is lost.
    """
    y = stream[:limit]
    idx = limit - 1
    return y[-idx:] if path == "naive" else y[:-1][-idx:]


def test_at_the_cap_the_last_token_is_dropped_as_upstreams_batched_path(
    cpu_engine: GptSovitsEngine,
):
    """Our cap of k tokens draws k + 1 (a stop at the extra draw is no cap) and
    keeps the first k: upstream's default (batched) path at its cap, with
    limit = k + 1.  The naive path (streaming modes) would keep 1..k instead;
    we follow the default path (docs/gpt-sovits.md, T2S stopping)."""
    p = cpu_engine.loaded.params
    # EOS sliced off at every step: the cap is the only way out
    cfg = SamplingConfig(15, 1.0, 1.0, p.repetition_penalty, p.eos, 10**6)
    phones, bert, prompt, _ = t2s_inputs(cpu_engine, SENTENCES[0])
    t2s, k = cpu_engine.loaded.t2s, 20

    def run(max_tokens: int):
        sampler = TokenSampler(cfg, p.vocab, prompt, np.random.default_rng(7))
        return t2s.generate(phones, bert, prompt, sampler, max_tokens)

    capped, longer = run(k), run(k + 3)
    stream = longer.tokens.tolist()  # the same draws, k + 3 of them
    assert capped.capped and len(capped.tokens) == k
    assert capped.tokens.tolist() == _upstream_at_cap(stream, k + 1, "batched")
    assert stream[:k] != _upstream_at_cap(stream, k + 1, "naive")
