"""Beam sampling as transformers' ``generate(num_beams=n, do_sample=True)``
runs it (``GenerationMixin._beam_search`` of transformers 5, batch 1), on the
logits of a decoder that holds one K/V cache row per beam.

Each step: per beam ``log_softmax`` of its logits, the processors and warpers
(``processors.hf_chain`` with HF's ``min_tokens_to_keep`` of 2), plus the
beam's running score; over all beams x vocab, ``2 * n`` candidates drawn
without replacement in proportion to ``softmax`` of those scores (torch's
``multinomial``: the ``2n`` largest ``probs / q``, ``q ~ Exp(1)``), sorted by
score. Candidates that end (EOS, or the length limit) may enter the ``n``
finished hypotheses, if among the ``n`` best candidates; the ``n`` best that
do not end run on. The search stops once no running beam can beat the worst
finished one (``early_stopping=False``'s heuristic) or every candidate ends.
The cache rows are reordered by each running beam's source before the next
step. The answer is the best finished hypothesis, its EOS included.

Scores are float32, as upstream keeps them; -1e9 is upstream's "impossible"
offset. The Exp(1) draws come from ``noise``: the daemon's per-request
generator, or, in parity tests, torch's own stream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from daemon.sdk.ar.loop import Checkpoint
from daemon.sdk.ar.processors import History, Processor, apply

#: upstream's score for a beam that must not be chosen
IMPOSSIBLE: Final = np.float32(-1e9)

#: ``noise(n)``: n float32 draws of Exp(1)
Noise = Callable[[int], np.ndarray]
#: ``step(tokens [n], sources [n])``: reorder the cache rows so row i holds
#: beam ``sources[i]``'s, feed ``tokens[i]`` to row i: the logits [n, vocab]
Step = Callable[[np.ndarray, np.ndarray], np.ndarray]


def numpy_noise(rng: np.random.Generator) -> Noise:
    return lambda n: rng.standard_exponential(n, dtype=np.float32)


@dataclass(frozen=True)
class BeamSettings:
    beams: int
    eos: int
    max_new_tokens: int
    #: transformers' ``length_penalty`` (scores divided by length ** it)
    length_penalty: float = 1.0
    #: transformers 5 sorts the drawn candidates by score; 4.57 (hexvoice's
    #: oracle extra) keeps them in draw order, which decides which of them are
    #: "the n best" that may finish
    sort_drawn: bool = True


def log_softmax(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` [n, V], float32, as torch computes it: x - max - log(sum)."""
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _top(x: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest, largest first (the first index on a tie)."""
    return np.argsort(-x, kind="stable")[:k]


class BeamSearch:
    """One request's beams: ``run(logits, step)`` -> the chosen tokens."""

    def __init__(
        self,
        settings: BeamSettings,
        chain: Sequence[Processor],
        history: History,
        noise: Noise,
    ) -> None:
        n, limit = settings.beams, settings.max_new_tokens
        if n < 1 or limit < 1:
            raise ValueError("beam search needs a beam and a token to generate")
        self.s, self.chain, self.noise = settings, list(chain), noise
        self.histories = [history.copy() for _ in range(n)]
        self.running = np.full((n, limit), settings.eos, np.int64)
        self.running_scores = np.zeros(n, np.float32)
        self.running_scores[1:] = IMPOSSIBLE  # only beam 0 at the first step
        self.done = np.full((n, limit), settings.eos, np.int64)
        self.done_scores = np.full(n, IMPOSSIBLE, np.float32)
        self.done_lengths = np.zeros(n, np.int64)
        self.finished = np.zeros(n, bool)
        self.improvable = True
        self.length = 0  # tokens per running beam

    def run(
        self, logits: np.ndarray, step: Step, cancel: Checkpoint | None = None
    ) -> list[int]:
        """From the prompt's ``logits`` [vocab] (one row serves every beam)
        to the best finished hypothesis; ``cancel`` is checked between steps."""
        rows = np.broadcast_to(logits.reshape(1, -1), (self.s.beams, logits.size))
        while True:
            sources = self.advance(rows)
            if sources is None:
                return self.best()
            if cancel is not None:
                cancel.check()
            rows = step(self.running[:, self.length - 1].copy(), sources)

    def advance(self, logits: np.ndarray) -> np.ndarray | None:
        """One step on ``logits`` [n, vocab]: each running beam's source beam,
        or None when the search is over."""
        s, n, t = self.s, self.s.beams, self.length
        scores = log_softmax(np.asarray(logits, np.float32))
        for b in range(n):
            scores[b] = apply(self.chain, scores[b], self.histories[b])
        vocab = scores.shape[1]
        flat = (scores + self.running_scores[:, None]).reshape(-1)
        shifted = np.exp(flat - flat.max())
        probs = shifted / shifted.sum()
        picked = _top(probs / self.noise(flat.size), 2 * n)
        if s.sort_drawn:
            picked = picked[np.argsort(-flat[picked], kind="stable")]
        cand_scores, source, token = flat[picked], picked // vocab, picked % vocab
        cand = self.running[source].copy()
        cand[:, t] = token
        ends = (token == s.eos) | (t + 1 >= s.max_new_tokens)

        keep = _top(cand_scores + ends * IMPOSSIBLE, n)
        self.running, self.running_scores = (
            cand[keep],
            (cand_scores + ends * IMPOSSIBLE)[keep],
        )
        self.histories = [self.histories[i].copy() for i in source[keep]]
        for h, tok in zip(self.histories, token[keep], strict=True):
            h.add(int(tok))
        self._finish(cand, cand_scores, ends, t)

        self.length = t + 1
        worst = np.where(self.finished, self.done_scores.min(), IMPOSSIBLE)
        best = self.running_scores[0] / np.float32(self.length**s.length_penalty)
        self.improvable = self.improvable and bool(np.any(best > worst))
        if not self.improvable or ends.all():
            return None
        return source[keep]

    def _finish(
        self, cand: np.ndarray, scores: np.ndarray, ends: np.ndarray, t: int
    ) -> None:
        n = self.s.beams
        final = scores / np.float32((t + 1) ** self.s.length_penalty)
        if not self.improvable:
            final = final + IMPOSSIBLE
        top = np.zeros(len(ends), bool)
        top[:n] = True
        just = ends & top
        final = final + ~just * IMPOSSIBLE
        merged = np.concatenate([self.done_scores, final])
        keep = _top(merged, n)
        seqs = np.concatenate([self.done, cand])
        lengths = np.concatenate([self.done_lengths, np.full(len(cand), t + 1)])
        self.done, self.done_scores = seqs[keep], merged[keep]
        self.done_lengths = lengths[keep]
        self.finished = np.concatenate([self.finished, just])[keep]

    def best(self) -> list[int]:
        return self.done[0, : self.done_lengths[0]].tolist()
