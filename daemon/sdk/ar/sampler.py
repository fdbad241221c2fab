"""One decode step's choice: processors, warpers, then a greedy or sampled draw.

``Sampler.step(logits)`` copies the step's logits into its own buffer, runs the
processors (their argmax is ``Choice.best``, the greedy token) and, if it has a
generator, the warpers, and draws from what survives. When the chain is the
common one (processors that only block ids, one repetition penalty,
temperature, top-k; no top-p) it runs as one numba pass (``fused.py``) over the
same float32 operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from daemon.sdk.ar import draws, fused
from daemon.sdk.ar.processors import (
    History,
    MinNewTokens,
    Processor,
    RepetitionPenalty,
    Suppress,
    Temperature,
    TopK,
    TopP,
    apply,
    softmax,
)

#: processors that only remove ids (slice or -inf): they commute with the
#: repetition penalty (-inf stays -inf), so the fused kernel may penalise last
_BLOCKING = (MinNewTokens, Suppress)


class Choice(NamedTuple):
    token: int  # the drawn token (the greedy one without a generator)
    best: int  # argmax of the processed scores, before any warper


@dataclass(frozen=True)
class _Fused:
    blocking: tuple[Processor, ...]
    penalty: np.float32
    temperature: np.float32
    top_k: int


def _fusable(
    processors: Sequence[Processor], warpers: Sequence[Processor]
) -> _Fused | None:
    penalties = [p for p in processors if isinstance(p, RepetitionPenalty)]
    blocking = [p for p in processors if isinstance(p, _BLOCKING)]
    if len(penalties) > 1 or len(penalties) + len(blocking) != len(processors):
        return None
    active = [w for w in warpers if not (isinstance(w, TopP) and w.p >= 1.0)]
    if active and isinstance(active[0], Temperature):
        temperature, active = active[0].temperature, active[1:]
    else:
        temperature = 1.0
    if len(active) != 1 or not isinstance(active[0], TopK):
        return None
    penalty = penalties[0].penalty if penalties else 1.0
    return _Fused(
        tuple(blocking),
        np.float32(penalty),
        np.float32(Temperature(temperature).temperature_floor()),
        active[0].k,
    )


def _identity(proc: Processor) -> bool:
    return isinstance(proc, RepetitionPenalty) and proc.penalty == 1.0


class Sampler:
    """Chooses each step's token for one request.

    ``rng=None`` decodes greedily (no warpers, no random numbers used).
    """

    def __init__(
        self,
        vocab: int,
        processors: Sequence[Processor],
        warpers: Sequence[Processor],
        history: History,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.vocab, self.history, self.rng = vocab, history, rng
        self.processors, self.warpers = list(processors), list(warpers)
        self._fused = _fusable(processors, warpers) if rng is not None else None
        # Greedy through processors that change nothing (a penalty of 1.0):
        # the argmax of the graph's own logits, without copying them (151,936
        # floats a step for Qwen3-ASR; the copy was most of its host time).
        self._plain = rng is None and all(_identity(p) for p in processors)
        self._work = np.empty(vocab, np.float32)
        k = self._fused.top_k if self._fused else 1
        self._top = np.empty(min(k, vocab), np.float32)
        self._cand = np.empty(vocab, np.int64)
        self._probs = np.empty(vocab, np.float32)
        #: token ids that had a non-zero probability at the last step
        self.candidates = self._cand[:0]
        #: and those probabilities
        self.probs = self._probs[:0]

    def step(self, logits: np.ndarray) -> Choice:
        """The next token from ``logits`` [vocab] (not yet in the history)."""
        if self._plain:
            best = draws.greedy(logits.reshape(-1))
            self.history.steps += 1
            return Choice(best, best)
        x, history = self._work, self.history
        np.copyto(x, logits.reshape(-1), casting="same_kind")
        f = self._fused
        if f is not None:
            for proc in f.blocking:
                x = proc(x, history)
            ids = history.ids
            if x.shape[0] < self.vocab:  # a sliced-off id is not penalised
                ids = ids[ids < x.shape[0]]
            top = self._top[: min(f.top_k, x.shape[0])]
            best, n = fused.penalise_top_k(
                x, ids, f.penalty, f.temperature, top, self._cand, self._probs
            )
            cand, probs = self._cand[:n], self._probs[:n]
        else:
            x = apply(self.processors, x, self.history)
            best = draws.greedy(x)
            if self.rng is None:
                self.history.steps += 1
                return Choice(best, best)
            p = softmax(apply(self.warpers, x, self.history))
            cand = np.flatnonzero(p)
            probs = p[cand]
        if not len(cand):
            raise ValueError("logits have no finite candidate (graph output NaN?)")
        self.candidates, self.probs = cand, probs
        assert self.rng is not None
        token = draws.sample(cand, probs, self.rng)
        self.history.steps += 1
        return Choice(token, best)

    def accept(self, token: int) -> None:
        """``token`` is part of the sequence now (the repetition penalty sees it)."""
        self.history.add(token)
