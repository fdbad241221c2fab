"""Sampling and stop rules against a torch transcription of upstream's code.

The GPT-SoVITS sampler is the shared toolkit's (daemon/sdk/ar) chain in
upstream's order; the single functions here are the toolkit's processors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from daemon.engines.gptsovits.sampling import SamplingConfig, TokenSampler
from daemon.sdk.ar.draws import race as draw
from daemon.sdk.ar.processors import (
    History,
    RepetitionPenalty,
    apply,
    gpt_sovits_chain,
    softmax,
)
from tests.daemon.engines.gptsovits import upstream_sampling as up

VOCAB, EOS = 1025, 1024
DEFAULT = SamplingConfig(15, 1.0, 1.0, 1.35, EOS, 11)
CONFIGS = {
    "defaults": DEFAULT,
    "top_p": SamplingConfig(15, 0.6, 1.0, 1.35, EOS, 11),
    "temperature": SamplingConfig(15, 1.0, 0.6, 1.35, EOS, 11),
    "all": SamplingConfig(20, 0.8, 0.7, 1.2, EOS, 11),
    "greedy": SamplingConfig(1, 1.0, 1.0, 1.35, EOS, 11),
    "no_penalty": SamplingConfig(50, 1.0, 1.3, 1.0, EOS, 11),
}


def apply_repetition_penalty(x: np.ndarray, seen: np.ndarray, penalty: float) -> None:
    RepetitionPenalty(penalty)(x, History(len(seen), np.flatnonzero(seen)))


def logits_to_probs(x: np.ndarray, cfg: SamplingConfig) -> np.ndarray:
    """Steps 4-7 (top-p, temperature, top-k, softmax): the chain's warpers."""
    _, warpers = gpt_sovits_chain(
        cfg.top_k, cfg.top_p, cfg.temperature, cfg.repetition_penalty,
        cfg.eos, cfg.eos_block_steps,
    )  # fmt: skip
    return softmax(apply(warpers, x, History(x.shape[0])))


def _kwargs(cfg: SamplingConfig) -> dict:
    return {
        "temperature": cfg.temperature,
        "top_k": cfg.top_k,
        "top_p": cfg.top_p,
        "repetition_penalty": cfg.repetition_penalty,
    }


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_probs_and_draw_equal_upstream_on_random_logits(name: str):
    cfg = CONFIGS[name]
    rng = np.random.default_rng(7)
    for trial in range(40):
        logits = (rng.standard_normal(VOCAB) * 3).astype(np.float32)
        prev = rng.integers(0, VOCAB - 1, 60)  # duplicates on purpose
        q = rng.standard_exponential(VOCAB)
        seen = np.zeros(VOCAB, bool)
        seen[prev] = True
        x = logits.copy()
        apply_repetition_penalty(x, seen, cfg.repetition_penalty)
        probs = logits_to_probs(x, cfg)
        t_logits = torch.from_numpy(logits.copy())[None]
        t_token, t_probs = up.sample(
            t_logits,
            torch.from_numpy(prev)[None],
            torch.from_numpy(q)[None],
            **_kwargs(cfg),
        )
        # the penalty is applied in place on upstream's tensor too
        np.testing.assert_allclose(x, t_logits[0].numpy(), rtol=0, atol=0)
        np.testing.assert_allclose(probs, t_probs[0].numpy(), rtol=1e-5, atol=1e-7)
        assert draw(probs, q) == int(t_token), (name, trial)
        kept = int((probs > 0).sum())
        assert kept == 1 if name == "greedy" else 1 <= kept <= cfg.top_k


@pytest.mark.parametrize("name", ["defaults", "all", "greedy"])
def test_token_sequences_and_stops_equal_upstream(name: str):
    """Whole loops: EOS blocked for 11 steps, both stop rules, penalty history."""
    cfg = CONFIGS[name]
    for seed in range(12):
        data = np.random.default_rng(100 + seed)
        prompt = data.integers(0, EOS, 30)
        sampler = TokenSampler(cfg, VOCAB, prompt, np.random.default_rng(seed))
        twin = np.random.default_rng(seed)  # replays the sampler's q draws
        y = torch.from_numpy(prompt)[None]
        ours, theirs = [], []
        for idx in range(60):
            logits = (data.standard_normal(VOCAB) * 2).astype(np.float32)
            logits[EOS] += 0.15 * idx  # EOS grows likelier, so loops do stop
            token, stop = sampler.step(logits)
            width = EOS if idx < cfg.eos_block_steps else VOCAB
            # the sampler races Exp(1) draws over its candidates only; others
            # have probability 0 for upstream too, whatever their q
            q = np.ones(width)
            q[sampler.candidates] = twin.standard_exponential(len(sampler.candidates))
            q = torch.from_numpy(q)
            y, t_stop = up.decode_step(
                torch.from_numpy(logits.copy())[None], y, idx, q, EOS, **_kwargs(cfg)
            )
            assert (token, stop) == (int(y[0, -1]), t_stop), (seed, idx)
            if stop:
                break
            ours.append(token)
            theirs.append(int(y[0, -1]))
        assert ours == theirs
        assert stop and len(ours) >= cfg.eos_block_steps


def test_eos_is_blocked_for_the_first_eleven_steps():
    sampler = TokenSampler(
        DEFAULT, VOCAB, np.zeros(0, np.int64), np.random.default_rng(0)
    )
    logits = np.zeros(VOCAB, np.float32)
    logits[EOS] = 50.0  # overwhelmingly likely once allowed
    for _ in range(11):
        token, stop = sampler.step(logits)
        assert token != EOS and not stop
    assert sampler.step(logits) == (EOS, True)


def test_post_penalty_argmax_on_eos_stops_even_if_another_token_is_drawn():
    # Token 5 leads before the penalty; once seen, 6.0 / 1.35 < 5.0 of EOS.
    logits = np.zeros(VOCAB, np.float32)
    logits[5], logits[EOS] = 6.0, 5.0
    cfg = SamplingConfig(2, 1.0, 1.0, 1.35, EOS, 0)
    stops = []
    for seed in range(20):
        fresh = np.zeros(0, np.int64)
        unseen = TokenSampler(cfg, VOCAB, fresh, np.random.default_rng(seed))
        token, stop = unseen.step(logits)  # argmax 5: only a drawn EOS stops
        assert stop == (token == EOS)
        sampler = TokenSampler(cfg, VOCAB, np.array([5]), np.random.default_rng(seed))
        token, stop = sampler.step(logits)
        stops.append((token, stop))
    assert all(stop for _, stop in stops)
    assert {token for token, _ in stops} == {5, EOS}  # both draws happen


def test_seen_tokens_are_penalised_once_each():
    x = np.array([2.0, -2.0, 1.0, 4.0], np.float32)
    seen = np.array([True, True, False, False])
    apply_repetition_penalty(x, seen, 2.0)
    np.testing.assert_array_equal(x, [1.0, -4.0, 1.0, 4.0])


def test_same_seed_same_tokens_different_seed_differs():
    data = np.random.default_rng(3)
    rows = (data.standard_normal((30, VOCAB)) * 0.5).astype(np.float32)

    def run(seed: int) -> list[int]:
        s = TokenSampler(DEFAULT, VOCAB, np.arange(10), np.random.default_rng(seed))
        return [s.step(r)[0] for r in rows]

    assert run(1) == run(1)
    assert run(1) != run(2)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"top_k": 0}, "top_k must be >= 1"),
        ({"top_k": 2.5}, "top_k must be an integer"),
        ({"top_p": 0.0}, "top_p must be in"),
        ({"top_p": 1.5}, "top_p must be in"),
        ({"temperature": 0.0}, "temperature must be > 0"),
        ({"temperature": float("nan")}, "finite"),
        ({"repetition_penalty": -1.0}, "repetition_penalty must be > 0"),
        ({"repetition_penalty": "1.3"}, "finite number"),
    ],
)
def test_bad_sampling_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DEFAULT.with_overrides(kwargs)


def test_eos_must_be_the_last_token():
    with pytest.raises(ValueError, match="must be the last token"):
        TokenSampler(DEFAULT, VOCAB + 1, np.zeros(0, np.int64), np.random.default_rng())
    with pytest.raises(ValueError, match="prompt tokens outside"):
        TokenSampler(DEFAULT, VOCAB, np.array([EOS]), np.random.default_rng())


@pytest.mark.parametrize("name", ["defaults", "temperature", "greedy", "no_penalty"])
def test_one_pass_kernel_equals_the_reference_functions(name: str):
    """The numba path (top_p == 1) gives the candidates and probabilities of
    apply_repetition_penalty + logits_to_probs, ties at the k-th value kept."""
    cfg = CONFIGS[name]
    rng = np.random.default_rng(21)
    for trial in range(30):
        logits = (rng.standard_normal(VOCAB) * 3).astype(np.float32)
        if trial % 3 == 0:  # a tie across the top-k boundary
            order = np.argsort(-logits)
            logits[order[cfg.top_k - 1 : cfg.top_k + 2]] = logits[order[cfg.top_k]]
        prompt = rng.integers(0, EOS, 50)
        sampler = TokenSampler(cfg, VOCAB, prompt, np.random.default_rng(0))
        sampler.history.steps = cfg.eos_block_steps  # full width
        sampler.step(logits)
        x = logits.copy()
        apply_repetition_penalty(x, _mask(prompt), cfg.repetition_penalty)
        probs = logits_to_probs(x, cfg)
        np.testing.assert_array_equal(sampler.candidates, np.flatnonzero(probs))
        np.testing.assert_allclose(
            sampler.probs,
            probs[sampler.candidates],
            rtol=1e-6,
        )


def _mask(ids: np.ndarray) -> np.ndarray:
    m = np.zeros(VOCAB, bool)
    m[ids] = True
    return m


def test_logits_without_a_finite_value_fail_clearly():
    sampler = TokenSampler(DEFAULT, VOCAB, np.arange(3), np.random.default_rng(0))
    with pytest.raises(ValueError, match="no finite candidate"):
        sampler.step(np.full(VOCAB, np.nan, np.float32))
