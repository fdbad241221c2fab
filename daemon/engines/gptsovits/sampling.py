"""Upstream-exact T2S token sampling and stopping, in numpy, per request.

Order per step (upstream AR/models/utils.py ``logits_to_probs`` + t2s_model.py
``infer_panel_naive``; shared/docs/gpt-sovits-v2pro.md §4.5-4.6):

1. for the first ``eos_block_steps`` steps the EOS column is sliced off;
2. repetition penalty, in place, once per distinct token id seen so far (prompt
   semantic tokens + generated tokens): ``x * p`` if ``x < 0`` else ``x / p``;
3. remember whether the penalised, untempered argmax is EOS (a stop rule);
4. top-p (only if < 1): sort descending, drop tokens whose inclusive cumulative
   probability exceeds top_p, always keep the first (no HF-style shift);
5. divide by ``max(temperature, 1e-5)``;
6. top-k: keep logits >= the k-th largest (ties kept);
7. softmax, then draw ``argmax(probs / q)`` with ``q ~ Exp(1)`` (an exact
   categorical draw, "exponential race").

Stop when the drawn token or the argmax of step 3 is EOS; the stop step's token
is dropped. Randomness comes only from the request's ``np.random.Generator``.

``apply_repetition_penalty`` / ``logits_to_probs`` / ``draw`` spell the steps out
in numpy (and serve top_p < 1); the default top_p = 1 runs steps 2-7 in one
numba kernel with the same float32 operations, because the decode loop calls it
after every graph step with cold caches (tests hold both to upstream's torch).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numba
import numpy as np

#: upstream ``logits / max(temperature, 1e-5)``
MIN_TEMPERATURE: Final = 1e-5
_TINY: Final = np.finfo(np.float64).tiny


@dataclass(frozen=True)
class SamplingConfig:
    """Sampling knobs of one request (defaults come from the bundle params)."""

    top_k: int
    top_p: float
    temperature: float
    repetition_penalty: float
    eos: int
    eos_block_steps: int

    def __post_init__(self) -> None:
        if not isinstance(self.top_k, int) or isinstance(self.top_k, bool):
            raise ValueError(f"top_k must be an integer, got {self.top_k!r}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")
        _finite("top_p", self.top_p)
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        _finite("temperature", self.temperature)
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        _finite("repetition_penalty", self.repetition_penalty)
        if self.repetition_penalty <= 0:
            raise ValueError(
                f"repetition_penalty must be > 0, got {self.repetition_penalty}"
            )

    def with_overrides(self, extra: Mapping[str, Any]) -> SamplingConfig:
        """A copy with the request's ``top_k``/``top_p``/... from ``extra``."""
        known = ("top_k", "top_p", "temperature", "repetition_penalty")
        fields = {k: extra[k] for k in known if k in extra}
        if not fields:
            return self
        if "top_k" in fields and isinstance(fields["top_k"], float):
            if not fields["top_k"].is_integer():
                raise ValueError(f"top_k must be an integer, got {fields['top_k']}")
            fields["top_k"] = int(fields["top_k"])
        kwargs = {f: getattr(self, f) for f in self.__dataclass_fields__}
        return SamplingConfig(**{**kwargs, **fields})


def _finite(name: str, value: Any) -> None:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not np.isfinite(value)
    ):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def apply_repetition_penalty(
    logits: np.ndarray, seen: np.ndarray, penalty: float
) -> None:
    """Upstream gather/where/scatter_ on the distinct seen ids, in place."""
    if penalty == 1.0:
        return
    ids = np.flatnonzero(seen[: logits.shape[0]])
    score = logits[ids]
    logits[ids] = np.where(
        score < 0, score * np.float32(penalty), score / np.float32(penalty)
    )


def logits_to_probs(logits: np.ndarray, cfg: SamplingConfig) -> np.ndarray:
    """Steps 4-7 (top-p, temperature, top-k, softmax) on penalised logits."""
    x = logits
    n = x.shape[0]
    if cfg.top_p < 1.0:
        order = np.argsort(-x, kind="stable")
        cum = np.cumsum(_softmax(x[order]))
        remove = cum > np.float32(cfg.top_p)
        remove[0] = False  # keep at least one option
        x = x.copy()
        x[order[remove]] = -np.inf
    x = x / np.float32(max(cfg.temperature, MIN_TEMPERATURE))
    k = min(cfg.top_k, n)
    pivot = np.partition(x, n - k)[n - k]
    x[x < pivot] = -np.inf
    return _softmax(x)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def draw(probs: np.ndarray, q: np.ndarray) -> int:
    """The exponential race: ``argmax(probs / q)`` for ``q ~ Exp(1)``.

    ``q`` is float64 and floored at the smallest normal number: a zero draw
    would turn a removed token's ``0 / 0`` into a NaN, which argmax picks.
    """
    return int(np.argmax(probs / np.maximum(q, _TINY)))


@numba.njit(nogil=True)
def _penalise_top_k(
    x: np.ndarray,
    ids: np.ndarray,
    penalty: np.float32,
    temperature: np.float32,
    top: np.ndarray,
    cand: np.ndarray,
    probs: np.ndarray,
) -> tuple[int, int]:
    """Steps 2-7 for top_p == 1 in one pass each, no temporaries (the host
    loop runs this after every decode step, with caches cold from the graph).

    Same float32 operations as ``apply_repetition_penalty`` +
    ``logits_to_probs``; returns (penalised argmax, number of candidates) and
    fills ``cand``/``probs`` with the surviving token ids (ascending) and their
    probabilities.
    """
    for i in ids:
        s = x[i]
        x[i] = s * penalty if s < 0 else s / penalty
    best = 0
    for i in range(1, x.size):
        if x[i] > x[best]:
            best = i
    k = top.size
    top[:] = -np.inf
    for i in range(x.size):
        t = x[i] / temperature
        if t > top[k - 1]:  # k-th largest with multiplicity, like torch.topk
            j = k - 1
            while j > 0 and top[j - 1] < t:
                top[j] = top[j - 1]
                j -= 1
            top[j] = t
    pivot, high = top[k - 1], top[0]
    n = 0
    total = np.float32(0.0)
    for i in range(x.size):
        t = x[i] / temperature
        if t >= pivot:  # ties with the k-th value are kept
            e = np.exp(t - high)
            cand[n] = i
            probs[n] = e
            total += e
            n += 1
    for j in range(n):
        probs[j] /= total
    return best, n


class TokenSampler:
    """Sampling state of one T2S segment: the distinct tokens seen so far (the
    prompt's and the generated ones) and the step index."""

    def __init__(
        self,
        cfg: SamplingConfig,
        vocab: int,
        prompt: np.ndarray,
        rng: np.random.Generator,
    ) -> None:
        if cfg.eos != vocab - 1:
            # Upstream asserts this too: blocking EOS slices off the last column.
            raise ValueError(f"EOS {cfg.eos} must be the last token ({vocab - 1})")
        self.cfg, self.vocab, self.rng = cfg, vocab, rng
        prompt = np.asarray(prompt, np.int64)
        if prompt.size and (prompt.min() < 0 or prompt.max() >= cfg.eos):
            raise ValueError(f"prompt tokens outside [0, {cfg.eos})")
        self.seen = np.zeros(vocab, bool)
        self.seen[prompt] = True
        self._ids = np.empty(vocab, np.int64)
        distinct = np.flatnonzero(self.seen)
        self._n_ids = len(distinct)
        self._ids[: self._n_ids] = distinct
        self.steps = 0
        self._work = np.empty(vocab, np.float32)
        self._top = np.empty(min(cfg.top_k, vocab), np.float32)
        self._cand = np.empty(vocab, np.int64)
        self._probs = np.empty(vocab, np.float32)
        self._penalty = np.float32(cfg.repetition_penalty)
        self._temperature = np.float32(max(cfg.temperature, MIN_TEMPERATURE))
        #: token ids that had a non-zero probability at the last step
        self.candidates = self._cand[:0]

    def step(self, logits: np.ndarray) -> tuple[int, bool]:
        """Sample the next token from ``logits`` [vocab]; returns (token, stop).

        The draw races ``q ~ Exp(1)`` over the candidates only (tokens outside
        them have probability 0 and cannot win).
        """
        cfg = self.cfg
        width = cfg.eos if self.steps < cfg.eos_block_steps else self.vocab
        x = self._work[:width]
        np.copyto(x, logits.reshape(-1)[:width], casting="same_kind")
        if cfg.top_p < 1.0:
            apply_repetition_penalty(x, self.seen, cfg.repetition_penalty)
            argmax = int(np.argmax(x))
            probs = logits_to_probs(x, cfg)
            cand = np.flatnonzero(probs)
            probs = probs[cand]
        else:
            top = self._top[: min(cfg.top_k, width)]
            ids = self._ids[: self._n_ids]  # all < EOS <= width
            argmax, n = _penalise_top_k(
                x, ids, self._penalty, self._temperature, top, self._cand, self._probs
            )
            cand, probs = self._cand[:n], self._probs[:n]
        if not len(cand):
            raise ValueError("T2S logits have no finite candidate (graph output NaN?)")
        self.candidates = cand
        q = self.rng.standard_exponential(len(cand))
        token = int(cand[draw(probs, q)])
        self.steps += 1
        stop = argmax == cfg.eos or token == cfg.eos
        if not stop and not self.seen[token]:
            self.seen[token] = True
            self._ids[self._n_ids] = token
            self._n_ids += 1
        return token, stop

    def warmup(self) -> None:
        """Compile the kernel (numba) before the first request needs it."""
        self.step(np.zeros(self.vocab, np.float32))
