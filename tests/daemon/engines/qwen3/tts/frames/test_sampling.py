"""Talker and predictor code choices against transformers' own processors, in
upstream's order (docs/qwen3.md, TTS generation loop)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from daemon.engines.qwen3.tts.frames.sampling import CodeChooser, TalkerChooser
from daemon.engines.qwen3.tts.options import Settings
from daemon.sdk.ar.draws import request_rng

torch = pytest.importorskip("torch")
from transformers import (  # noqa: E402
    LogitsProcessorList,
    MinNewTokensLengthLogitsProcessor,
    RepetitionPenaltyLogitsProcessor,
    SuppressTokensLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

V, VC, EOS = 1152, 128, 230
SUPPRESS = (V - 1024, V)
SETTINGS = Settings(
    do_sample=True, top_k=40, top_p=0.95, temperature=0.8, repetition_penalty=1.1,
    min_new_tokens=2, subtalker_do_sample=True, subtalker_top_k=30,
    subtalker_top_p=0.9, subtalker_temperature=0.7, suppress=SUPPRESS,
)  # fmt: skip
GREEDY = Settings(
    **{**SETTINGS.__dict__, "do_sample": False, "subtalker_do_sample": False}
)


def hf_talker(s: Settings) -> tuple[LogitsProcessorList, LogitsProcessorList]:
    """transformers' _get_logits_processor for upstream's talker kwargs."""
    suppressed = [i for i in range(*s.suppress) if i != EOS]
    processors = LogitsProcessorList([
        RepetitionPenaltyLogitsProcessor(s.repetition_penalty),
        MinNewTokensLengthLogitsProcessor(0, s.min_new_tokens, EOS),
        SuppressTokensLogitsProcessor(suppressed),
    ])  # fmt: skip
    warpers = LogitsProcessorList([
        TemperatureLogitsWarper(s.temperature), TopKLogitsWarper(s.top_k),
        TopPLogitsWarper(s.top_p),
    ])  # fmt: skip
    return processors, warpers


def steps(n: int, seed: int = 0) -> np.ndarray:
    """Random talker logits whose best ids would break the rules: EOS first
    (masked for 2 steps), a suppressed id, then repeats (penalised)."""
    x = np.random.default_rng(seed).normal(0, 2, (n, V)).astype(np.float32)
    x[0, EOS] = x[1, EOS] = 50.0
    x[2, 1000] = 60.0  # suppressed
    x[3:, 7] = x[3:].max(1) + 0.05  # a token seen before wins by a hair, then loses
    return x


def test_greedy_talker_follows_hf_order_and_masks() -> None:
    x = steps(12)
    x[9, EOS] = 80.0
    processors, _ = hf_talker(GREEDY)
    choose = TalkerChooser(GREEDY, V, EOS, request_rng(0))
    ids = torch.zeros((1, 0), dtype=torch.long)
    ours, theirs = [], []
    for step in x:
        token, stop = choose(step.copy())
        scores = processors(ids, torch.from_numpy(step.copy())[None])
        best = int(scores.argmax())
        theirs.append(best)
        ours.append(token)
        if stop:
            break
        ids = torch.cat([ids, torch.tensor([[token]])], 1)
    assert ours == theirs
    assert ours[0] != EOS and ours[1] != EOS  # min_new_tokens: EOS masked, next best
    assert ours[2] != 1000 and all(t < SUPPRESS[0] or t == EOS for t in ours)
    assert ours[-1] == EOS and len(ours) == 10  # stops at the first EOS


def test_sampled_talker_distribution_is_hf_warpers() -> None:
    x = steps(6, seed=1)
    processors, warpers = hf_talker(SETTINGS)
    choose = TalkerChooser(SETTINGS, V, EOS, request_rng(3))
    ids = torch.zeros((1, 0), dtype=torch.long)
    for step in x:
        token, stop = choose(step.copy())
        s = processors(ids, torch.from_numpy(step.copy())[None])
        probs = torch.softmax(warpers(ids, s), -1)[0].numpy()
        cand = choose.sampler.candidates
        assert set(cand) == set(np.flatnonzero(probs))
        np.testing.assert_allclose(choose.sampler.probs, probs[cand], rtol=2e-5)
        assert token in set(cand)
        if stop:
            break
        ids = torch.cat([ids, torch.tensor([[token]])], 1)


@pytest.mark.parametrize(
    ("top_k", "top_p", "temperature"),
    [(30, 0.9, 0.7), (50, 1.0, 0.9), (0, 0.8, 1.3), (128, 0.5, 0.2), (1, 1.0, 1.0)],
)
def test_predictor_has_no_penalty_and_hf_warpers(
    top_k: int, top_p: float, temperature: float
) -> None:
    rng = np.random.default_rng(5)
    logits = rng.normal(0, 2, VC).astype(np.float32)
    logits[[3, 9, 40]] = np.sort(logits)[-top_k if top_k else -1]  # ties at the pivot
    greedy = CodeChooser(GREEDY, VC, request_rng(0))
    best = int(np.argmax(logits))
    assert [greedy(logits, k) for k in range(15)] == [best] * 15  # no penalty
    s = dataclasses.replace(
        SETTINGS, subtalker_top_k=top_k, subtalker_top_p=top_p,
        subtalker_temperature=temperature,
    )  # fmt: skip
    sampled = CodeChooser(s, VC, request_rng(0))
    warpers = [TemperatureLogitsWarper(temperature)]
    if top_k:
        warpers.append(TopKLogitsWarper(top_k))
    if top_p < 1.0:
        warpers.append(TopPLogitsWarper(top_p))
    t = torch.from_numpy(logits.copy())[None]
    scores = LogitsProcessorList(warpers)(torch.zeros((1, 0), dtype=torch.long), t)
    probs = torch.softmax(scores, -1)[0].numpy()
    for _ in range(3):  # the same candidates every draw; the draw is one of them
        code = sampled(logits, 0)
        cand = sampled.candidates
        assert set(cand) == set(np.flatnonzero(probs)) and code in set(cand)
        np.testing.assert_allclose(sampled.probs, probs[cand], rtol=2e-5, atol=1e-7)


def test_a_seed_gives_the_same_codes_and_seeds_differ() -> None:
    x = steps(20, seed=2)
    x[:, EOS] = -50.0

    def run(seed: int) -> list[int]:
        rng = request_rng(seed)
        talker, code = (
            TalkerChooser(SETTINGS, V, EOS, rng),
            CodeChooser(SETTINGS, VC, rng),
        )
        out = []
        for step in x:
            out.append(talker(step.copy())[0])
            out += [code(step[:VC].copy(), k) for k in range(15)]
        return out

    assert run(7) == run(7)
    assert run(7) != run(8)
