"""How each code is chosen: the talker's code0 and the predictor's codes 1..15.

Upstream ``Qwen3TTSForConditionalGeneration.generate`` runs the talker through
HF ``generate`` (transformers ``_get_logits_processor`` order; docs/qwen3.md, TTS
generation loop):

1. repetition penalty over the generated code0s only (the prompt is embeds, so
   HF's ``input_ids`` start empty);
2. ``min_new_tokens`` (2): EOS is -inf while fewer code0s exist, so the next
   best token is taken ("mask EOS", not "resample");
3. suppress [vocab - 1024, vocab) but EOS;
4. when sampling: temperature, top-k, top-p (HF's), then a draw.

The code predictor's ``generate`` has its own temperature / top-k / top-p and
no penalty, suppression or EOS.  Both draw from the request's one generator
(daemon/sdk/ar/draws.py), talker and predictor in call order, so a seed gives
the same codes every time.  EOS only ever comes from codebook 0.
"""

from __future__ import annotations

import numpy as np

from daemon.engines.qwen3.tts.options import Settings
from daemon.sdk.ar import draws
from daemon.sdk.ar.processors import (
    History,
    Suppress,
    Temperature,
    hf_chain,
    softmax,
)
from daemon.sdk.ar.sampler import Sampler


class TalkerChooser:
    """Code0 of each step: ``(logits) -> (code0, stop)``; stop on EOS."""

    def __init__(
        self,
        s: Settings,
        vocab: int,
        eos: int,
        rng: np.random.Generator | None,
    ) -> None:
        processors, warpers = hf_chain(
            s.top_k or None, s.top_p, s.temperature, s.repetition_penalty, eos,
            min_new_tokens=s.min_new_tokens,
            suppress=Suppress((s.suppress,), keep=(eos,)),
        )  # fmt: skip
        greedy = not s.do_sample or rng is None
        self.eos = eos
        self.sampler = Sampler(
            vocab, processors, [] if greedy else warpers, History(vocab),
            None if greedy else rng,
        )  # fmt: skip

    def __call__(self, logits: np.ndarray) -> tuple[int, bool]:
        token = self.sampler.step(logits).token
        stop = token == self.eos
        if not stop:
            self.sampler.accept(token)
        return token, stop


class CodeChooser:
    """Codes 1..15: ``(logits, head) -> code`` (the head does not change the
    rule; upstream uses one warper chain for all 15).

    Sampling is 15 draws a frame over the whole codebook (2048), so it works on
    the top-k candidates only: the k-th largest scaled logit by partition (ties
    with it kept, as ``TopKLogitsWarper``), softmax and HF's top-p over those,
    one Exp(1) race.  The same distribution as temperature -> top-k -> top-p
    over all ids (HF's softmax gives the removed ids 0), at a fraction of the
    full-vocabulary passes.
    """

    def __init__(
        self, s: Settings, vocab: int, rng: np.random.Generator | None
    ) -> None:
        self.greedy = not s.subtalker_do_sample or rng is None
        self.rng = rng
        self.temperature = np.float32(
            Temperature(s.subtalker_temperature).temperature_floor()
        )
        self.top_k = min(s.subtalker_top_k or vocab, vocab)
        self.top_p = np.float32(s.subtalker_top_p)
        self._scaled = np.empty(vocab, np.float32)
        #: ids that had a non-zero probability at the last draw, and those
        self.candidates = np.zeros(0, np.int64)
        self.probs = np.zeros(0, np.float32)

    def __call__(self, logits: np.ndarray, head: int) -> int:
        x = logits.reshape(-1)
        if self.greedy:
            return draws.greedy(x)
        t = np.divide(x, self.temperature, out=self._scaled)
        n = t.shape[0]
        if self.top_k < n:
            pivot = np.partition(t, n - self.top_k)[n - self.top_k]
            cand = np.flatnonzero(t >= pivot)
        else:
            cand = np.arange(n)
        probs = softmax(t[cand])
        if (
            self.top_p < 1.0
        ):  # HF TopPLogitsWarper: keep until the mass before reaches p
            order = np.argsort(-probs, kind="stable")
            ranked = probs[order]
            remove = np.cumsum(ranked) - ranked >= self.top_p
            remove[0] = False
            keep = np.sort(order[~remove])
            kept = probs[keep]  # HF's softmax over the survivors: same max, renormed
            cand, probs = cand[keep], kept / kept.sum()
        self.candidates, self.probs = cand, probs
        assert self.rng is not None
        return draws.sample(cand, probs, self.rng)
