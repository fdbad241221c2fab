"""The sampler: fused kernel vs the processors, greedy, per-request RNG."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.ar.draws import greedy, race, request_rng, sample
from daemon.sdk.ar.processors import (
    History,
    RepetitionPenalty,
    Suppress,
    apply,
    gpt_sovits_chain,
    hf_chain,
    softmax,
)
from daemon.sdk.ar.sampler import Sampler

VOCAB, EOS = 64, 63


def _gsv(rng, prompt=(1, 2, 3), **kw) -> Sampler:  # type: ignore[no-untyped-def]
    knobs = {"top_k": 8, "top_p": 1.0, "temperature": 0.8, "repetition_penalty": 1.3}
    procs, warps = gpt_sovits_chain(**{**knobs, **kw}, eos=EOS, eos_block_steps=2)
    return Sampler(VOCAB, procs, warps, History(VOCAB, prompt), rng)


@pytest.mark.parametrize("chain", ["gpt-sovits", "hf"])
def test_fused_kernel_equals_the_processors(chain: str) -> None:
    """Same candidates and probabilities on both paths, for both orders."""
    data = np.random.default_rng(0)
    for trial in range(20):
        logits = (data.standard_normal(VOCAB) * 2).astype(np.float32)
        prompt = data.integers(0, EOS, 10)
        if chain == "hf":
            procs, warps = hf_chain(
                8, 1.0, 0.7, 1.2, EOS, 2, Suppress(((40, 64),), keep=(EOS,))
            )
        else:
            procs, warps = gpt_sovits_chain(8, 1.0, 0.7, 1.2, EOS, 2)
        fast = Sampler(VOCAB, procs, warps, History(VOCAB, prompt), request_rng(1))
        assert fast._fused is not None
        fast.history.steps = trial % 4  # EOS blocked in half the trials
        choice = fast.step(logits)
        h = History(VOCAB, prompt)
        h.steps = trial % 4
        x = apply(procs, logits.copy(), h)
        p = softmax(apply(warps, x, h))
        np.testing.assert_array_equal(fast.candidates, np.flatnonzero(p))
        np.testing.assert_allclose(fast.probs, p[fast.candidates], rtol=1e-6)
        assert choice.best == greedy(x)


def test_top_p_takes_the_processor_path() -> None:
    s = _gsv(request_rng(0), top_p=0.9)
    assert s._fused is None
    s.step(np.linspace(-1, 1, VOCAB, dtype=np.float32))
    assert 1 <= len(s.candidates) <= 8


def test_greedy_draws_no_random_numbers() -> None:
    procs, _ = gpt_sovits_chain(8, 1.0, 1.0, 1.3, EOS, 2)
    s = Sampler(VOCAB, procs, [], History(VOCAB, [5]), rng=None)
    logits = np.zeros(VOCAB, np.float32)
    logits[5], logits[6], logits[EOS] = 3.0, 2.5, 9.0
    # EOS blocked for 2 steps, 5 penalised below 6
    assert s.step(logits).token == 6
    s.accept(6)
    assert s.step(logits).token == 5  # 6 is penalised now too: 2.5/1.3 < 3/1.3
    assert s.step(logits).token == EOS


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_plain_greedy_is_the_first_argmax_of_the_graphs_own_logits(dtype) -> None:
    """A penalty of 1.0 changes nothing, so greedy reads the logits as they
    are (no copy); the choice is the processed path's, ties to the first id."""
    rows = np.random.default_rng(4).standard_normal((20, VOCAB)).astype(dtype)
    rows[3, [7, 9]] = rows[3].max() + 1  # a tie
    plain = Sampler(VOCAB, [RepetitionPenalty(1.0)], [], History(VOCAB, [1]))
    full = Sampler(VOCAB, [RepetitionPenalty(1.0), Suppress(((60, 62),))], [],
                   History(VOCAB, [1]))  # fmt: skip
    for row in rows:
        before = row.copy()
        row[60:62] = -np.inf
        got, want = plain.step(row), full.step(row)
        assert got.token == want.token == int(np.argmax(row)) and got.best == got.token
        row[60:62] = before[60:62]
    assert plain.step(rows[3]).token == 7 and plain.history.steps == 21


def test_rng_is_per_request_and_reproducible() -> None:
    """A seed fixes a request's tokens whatever other requests do meanwhile."""
    rows = (np.random.default_rng(9).standard_normal((25, VOCAB))).astype(np.float32)

    def tokens(*samplers: Sampler) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in samplers]
        for row in rows:  # interleaved, like two requests in turns
            for i, s in enumerate(samplers):
                c = s.step(row)
                s.accept(c.token)
                out[i].append(c.token)
        return out

    (alone,) = tokens(_gsv(request_rng(7)))
    with_other, other = tokens(_gsv(request_rng(7)), _gsv(request_rng(8)))
    assert alone == with_other
    assert other != alone


def test_draws() -> None:
    probs = np.array([0.2, 0.5, 0.3])
    assert race(probs, np.array([1.0, 1.0, 1.0])) == 1
    assert race(probs, np.array([0.01, 1.0, 1.0])) == 0
    # a zero draw on a removed token is not a NaN that wins
    assert race(np.array([0.0, 1.0]), np.array([0.0, 1.0])) == 1
    cand = np.array([4, 9, 11])
    picks = [sample(cand, probs, request_rng(s)) for s in range(2000)]
    share = np.bincount(picks, minlength=12)[cand] / len(picks)
    np.testing.assert_allclose(share, probs, atol=0.04)


def test_nan_logits_fail_clearly() -> None:
    with pytest.raises(ValueError, match="no finite candidate"):
        _gsv(request_rng(0)).step(np.full(VOCAB, np.nan, np.float32))
