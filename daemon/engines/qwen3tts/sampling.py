"""How each code is chosen: the talker's code0 and the predictor's codes 1..15.

Upstream ``Qwen3TTSForConditionalGeneration.generate`` runs the talker through
HF ``generate`` (transformers ``_get_logits_processor`` order; qwen3.md §2.4):

1. repetition penalty over the generated code0s only (the prompt is embeds, so
   HF's ``input_ids`` start empty);
2. ``min_new_tokens`` (2): EOS is -inf while fewer code0s exist, so the next
   best token is taken ("mask EOS", not "resample");
3. suppress [vocab - 1024, vocab) but EOS;
4. when sampling: temperature, top-k, top-p (HF's), then a draw.

The code predictor's ``generate`` has its own temperature / top-k / top-p and
no penalty, suppression or EOS.  Both draw from the request's one generator
(daemon/engine/ar/draws.py), talker and predictor in call order, so a seed gives
the same codes every time.  EOS only ever comes from codebook 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from daemon.engine.ar.processors import (
    History,
    Suppress,
    Temperature,
    TopK,
    TopP,
    hf_chain,
)
from daemon.engine.ar.sampler import Sampler


@dataclass(frozen=True)
class Settings:
    """The sampling knobs of one request (params.sampling with overrides)."""

    do_sample: bool
    top_k: int
    top_p: float
    temperature: float
    repetition_penalty: float
    min_new_tokens: int
    subtalker_do_sample: bool
    subtalker_top_k: int
    subtalker_top_p: float
    subtalker_temperature: float
    suppress: tuple[int, int]


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
    rule; upstream uses one warper chain for all 15)."""

    def __init__(
        self, s: Settings, vocab: int, rng: np.random.Generator | None
    ) -> None:
        greedy = not s.subtalker_do_sample or rng is None
        warpers: list = []
        if not greedy:
            warpers.append(Temperature(s.subtalker_temperature))
            if s.subtalker_top_k:
                warpers.append(TopK(s.subtalker_top_k))
            warpers.append(TopP(s.subtalker_top_p, keep_crossing=True))
        self.sampler = Sampler(
            vocab, [], warpers, History(vocab), None if greedy else rng
        )

    def __call__(self, logits: np.ndarray, head: int) -> int:
        return self.sampler.step(logits).token
