"""Logits processors and warpers, in numpy, composed in a model's upstream order.

A *processor* edits the scores of one step in place (repetition penalty, EOS
held back until enough tokens exist, suppressed ids); its result is what a
greedy decoder takes the argmax of. A *warper* then shapes the sampling
distribution (temperature, top-k, top-p). Each is ``(x, history) -> x`` and may
return a view or a new array. The order is the model's, and it matters
(tests/daemon/sdk/ar/test_processors.py shows a case):

- GPT-SoVITS (AR/models/utils.py ``logits_to_probs``, t2s_model.py; see
  docs/gpt-sovits.md, T2S sampling; T2S stopping): EOS column sliced off for the
  first steps, repetition penalty; then top-p (no HF shift), temperature, top-k.
- HF transformers ``_get_logits_processor`` (Qwen3 talker, docs/qwen3.md,
  TTS generation loop): repetition penalty, min-new-tokens, suppress; then
  temperature, top-k, top-p.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np

#: upstream ``logits / max(temperature, 1e-5)`` (GPT-SoVITS; HF refuses <= 0)
MIN_TEMPERATURE: Final = 1e-5


class History:
    """The tokens a request has seen (prompt + accepted), as the distinct ids in
    first-seen order, and the number of decode steps taken."""

    def __init__(self, vocab: int, prompt: Sequence[int] | np.ndarray = ()) -> None:
        prompt = np.asarray(prompt, np.int64).reshape(-1)
        if prompt.size and (prompt.min() < 0 or prompt.max() >= vocab):
            raise ValueError(f"history tokens outside [0, {vocab})")
        self.seen = np.zeros(vocab, bool)
        self.seen[prompt] = True
        self._ids = np.empty(vocab, np.int64)
        distinct = np.flatnonzero(self.seen)
        self._n = len(distinct)
        self._ids[: self._n] = distinct
        self.steps = 0

    @property
    def ids(self) -> np.ndarray:
        """Distinct seen ids (a view; prompt ids ascending, then new ones)."""
        return self._ids[: self._n]

    def copy(self) -> History:
        """An independent history with the same tokens (a beam that forks)."""
        other = History.__new__(History)
        other.seen, other._ids = self.seen.copy(), self._ids.copy()
        other._n, other.steps = self._n, self.steps
        return other

    def add(self, token: int) -> None:
        if not self.seen[token]:
            self.seen[token] = True
            self._ids[self._n] = token
            self._n += 1


class Processor(Protocol):
    def __call__(self, x: np.ndarray, history: History) -> np.ndarray: ...


@dataclass(frozen=True)
class RepetitionPenalty:
    """Each distinct seen id once: ``x * p`` if ``x < 0`` else ``x / p`` (upstream
    gather / where / scatter_, in place)."""

    penalty: float

    def __call__(self, x: np.ndarray, history: History) -> np.ndarray:
        if self.penalty == 1.0:
            return x
        ids = np.flatnonzero(history.seen[: x.shape[0]])
        score = x[ids]
        p = np.float32(self.penalty)
        x[ids] = np.where(score < 0, score * p, score / p)
        return x


@dataclass(frozen=True)
class MinNewTokens:
    """EOS cannot be chosen during the first ``steps`` decode steps.

    With EOS the last id, GPT-SoVITS slices its column off (``logits[:, :-1]``)
    and so does this (a view); otherwise EOS becomes -inf (HF
    ``MinNewTokensLengthLogitsProcessor``). Both give the same distribution.
    """

    eos: int
    steps: int

    def __call__(self, x: np.ndarray, history: History) -> np.ndarray:
        if history.steps >= self.steps:
            return x
        if self.eos == x.shape[0] - 1:
            return x[: self.eos]
        x[self.eos] = -np.inf
        return x


@dataclass(frozen=True)
class Suppress:
    """Ids in ``[start, stop)`` ranges cannot be chosen, except ``keep`` (Qwen3
    talker: [vocab - 1024, vocab) but its EOS)."""

    ranges: tuple[tuple[int, int], ...]
    keep: tuple[int, ...] = ()

    def __call__(self, x: np.ndarray, history: History) -> np.ndarray:
        keep = [i for i in self.keep if i < x.shape[0]]  # EOS may be sliced off
        kept = x[keep].copy()
        for start, stop in self.ranges:
            x[start:stop] = -np.inf
        x[keep] = kept
        return x


@dataclass(frozen=True)
class Temperature:
    temperature: float

    def temperature_floor(self) -> float:
        return max(self.temperature, MIN_TEMPERATURE)

    def __call__(self, x: np.ndarray, history: History) -> np.ndarray:
        return x / np.float32(self.temperature_floor())


@dataclass(frozen=True)
class TopK:
    """Keep logits >= the k-th largest (ties kept, like ``torch.topk``'s pivot).

    ``min_keep``: HF's ``min_tokens_to_keep`` (2 in beam sampling, where one
    kept token may be EOS) raises k to at least that many.
    """

    k: int
    min_keep: int = 1

    def __call__(self, x: np.ndarray, history: History) -> np.ndarray:
        n = x.shape[0]
        k = min(max(self.k, self.min_keep), n)
        pivot = np.partition(x, n - k)[n - k]
        x[x < pivot] = -np.inf
        return x


@dataclass(frozen=True)
class TopP:
    """Nucleus: drop the tail of the distribution past ``p``; the best
    ``min_keep`` tokens always stay.

    ``keep_crossing=False`` is GPT-SoVITS: sort descending, and the token whose
    inclusive cumulative probability exceeds ``p`` is dropped. ``True`` is HF
    ``TopPLogitsWarper``, in its own float32 steps: sort ascending, and a token
    goes when the cumulative probability up to it is at most ``1 - p`` (the
    token that crosses ``p`` stays).
    """

    p: float
    keep_crossing: bool = False
    min_keep: int = 1

    def __call__(self, x: np.ndarray, history: History) -> np.ndarray:
        if self.p >= 1.0:
            return x
        if self.keep_crossing:
            order = np.argsort(x, kind="stable")
            cum = np.cumsum(softmax(x[order]), dtype=np.float32)
            # HF compares with the Python float 1 - p, cast to float32
            remove = cum <= np.float32(1.0 - self.p)
            remove[len(remove) - self.min_keep :] = False
        else:
            order = np.argsort(-x, kind="stable")
            remove = np.cumsum(softmax(x[order])) > np.float32(self.p)
            remove[: self.min_keep] = False  # keep at least one option
        x = x.copy()
        x[order[remove]] = -np.inf
        return x


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def apply(chain: Sequence[Processor], x: np.ndarray, history: History) -> np.ndarray:
    for proc in chain:
        x = proc(x, history)
    return x


def gpt_sovits_chain(
    top_k: int,
    top_p: float,
    temperature: float,
    repetition_penalty: float,
    eos: int,
    eos_block_steps: int,
) -> tuple[list[Processor], list[Processor]]:
    """(processors, warpers) in GPT-SoVITS's order."""
    processors: list[Processor] = [
        MinNewTokens(eos, eos_block_steps),
        RepetitionPenalty(repetition_penalty),
    ]
    warpers: list[Processor] = [TopP(top_p), Temperature(temperature), TopK(top_k)]
    return processors, warpers


def hf_chain(
    top_k: int | None,
    top_p: float,
    temperature: float,
    repetition_penalty: float,
    eos: int,
    min_new_tokens: int = 0,
    suppress: Suppress | None = None,
    min_keep: int = 1,
) -> tuple[list[Processor], list[Processor]]:
    """(processors, warpers) in HF transformers' order (Qwen3; IndexTTS-2's
    beam sampling, whose ``min_tokens_to_keep`` is 2)."""
    processors: list[Processor] = [RepetitionPenalty(repetition_penalty)]
    if min_new_tokens:
        processors.append(MinNewTokens(eos, min_new_tokens))
    if suppress is not None:
        processors.append(suppress)
    warpers: list[Processor] = [Temperature(temperature)]
    if top_k:
        warpers.append(TopK(top_k, min_keep))
    warpers.append(TopP(top_p, keep_crossing=True, min_keep=min_keep))
    return processors, warpers
