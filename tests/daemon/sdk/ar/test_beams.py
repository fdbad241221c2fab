"""Beam sampling is transformers' own: ``generate(do_sample=True, num_beams=3)``
of a tiny random GPT-2 (the oracle extra's transformers), its Exp(1) draws fed
from torch's stream under the same seed, against ``BeamSearch`` driven by the
same model's logits; runs that end by EOS and runs cut at the limit, a length
penalty of 0 and 1, two warper chains. Plus the edges: bad settings, cancel
between steps, and KvGraph.reorder moving only the beams whose source changes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from daemon.sdk.ar.beams import BeamSearch, BeamSettings, numpy_noise
from daemon.sdk.ar.processors import History, hf_chain

VOCAB, EOS, BEAMS = 29, 28, 3
PROMPT = [3, 7, 1, 7]


def model(seed: int, eos_logit: float) -> GPT2LMHeadModel:
    """Random weights far from init; EOS's logit is ``eos_logit`` plus a random
    part: one ln_f channel is constant 1, and only EOS's head row reads it."""
    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=VOCAB, n_positions=64, n_embd=24, n_layer=2, n_head=2,
        tie_word_embeddings=False,
    )  # fmt: skip
    m = GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():
        for p in m.parameters():
            p.add_(torch.randn_like(p) * 0.2)
        m.transformer.ln_f.weight[0], m.transformer.ln_f.bias[0] = 0.0, 1.0
        m.lm_head.weight[:, 0] = 0.0
        m.lm_head.weight[EOS, 0] = eos_logit
    return m


def logits_of(m: GPT2LMHeadModel, rows: list[list[int]]) -> np.ndarray:
    with torch.no_grad():
        return m(torch.tensor(rows)).logits[:, -1].numpy()


CASES = {
    # (seed, EOS logit, top_k, top_p, temperature, penalty, length penalty, limit)
    "ends": (0, 1.0, 30, 0.8, 0.8, 10.0, 0.0, 14),
    "limit": (1, -1e4, 30, 0.8, 0.8, 10.0, 0.0, 9),
    "plain": (2, 0.5, 0, 1.0, 1.0, 1.0, 1.0, 12),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
@pytest.mark.parametrize("seed", [0, 5])
def test_tokens_are_transformers(case: str, seed: int) -> None:
    mseed, bias, top_k, top_p, temp, penalty, length_penalty, limit = CASES[case]
    m = model(mseed, bias)
    torch.manual_seed(seed)
    with torch.no_grad():
        out = m.generate(
            torch.tensor([PROMPT]), do_sample=True, num_beams=BEAMS,
            top_k=top_k, top_p=top_p, temperature=temp,
            repetition_penalty=penalty, length_penalty=length_penalty,
            max_new_tokens=limit, eos_token_id=EOS, pad_token_id=EOS,
        )  # fmt: skip
    want = out[0, len(PROMPT) :].tolist()

    procs, warpers = hf_chain(top_k, top_p, temp, penalty, EOS, min_keep=2)
    # transformers 4.57 keeps the drawn candidates in draw order (5 sorts them;
    # the IndexTTS-2 package's tests check that against transformers 5)
    settings = BeamSettings(BEAMS, EOS, limit, length_penalty, sort_drawn=False)
    torch.manual_seed(seed)
    search = BeamSearch(
        settings,
        procs + warpers,
        History(VOCAB, PROMPT),
        lambda n: torch.empty(1, n).exponential_(1).numpy()[0],
    )
    beams = [list(PROMPT)] * BEAMS

    def step(tokens: np.ndarray, sources: np.ndarray) -> np.ndarray:
        nonlocal beams
        beams = [beams[s] + [int(t)] for s, t in zip(sources, tokens, strict=True)]
        return logits_of(m, beams)

    got = search.run(logits_of(m, [PROMPT])[0], step)
    assert got == want
    if case == "limit":
        assert len(got) == limit and EOS not in got
    if case == "ends" and seed == 0:
        assert got[-1] == EOS and len(got) < limit


def test_bad_settings_are_refused() -> None:
    for beams, limit in ((0, 5), (3, 0)):
        with pytest.raises(ValueError, match="beam"):
            BeamSearch(
                BeamSettings(beams, EOS, limit),
                [],
                History(VOCAB),
                numpy_noise(np.random.default_rng(0)),
            )


class Cancelled(Exception):
    pass


class CancelAfter:
    def __init__(self, n: int) -> None:
        self.n = n

    def check(self) -> None:
        self.n -= 1
        if self.n < 0:
            raise Cancelled


def test_cancel_is_checked_between_steps() -> None:
    m, calls = model(0, -1e4), []
    search = BeamSearch(
        BeamSettings(BEAMS, EOS, 20),
        hf_chain(30, 0.8, 0.8, 10.0, EOS, min_keep=2)[1],
        History(VOCAB, PROMPT),
        numpy_noise(np.random.default_rng(1)),
    )

    def step(tokens: np.ndarray, sources: np.ndarray) -> np.ndarray:
        calls.append(1)
        return logits_of(m, [PROMPT + [int(t)] for t in tokens])

    with pytest.raises(Cancelled):
        search.run(logits_of(m, [PROMPT])[0], step, CancelAfter(2))
    assert len(calls) == 2  # no graph call after the cancel
