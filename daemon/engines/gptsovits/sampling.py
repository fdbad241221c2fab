"""GPT-SoVITS T2S token choice: upstream's sampling and stop rules, per request.

Order per step (upstream AR/models/utils.py ``logits_to_probs`` + t2s_model.py
``infer_panel_naive``; docs/gpt-sovits.md, T2S sampling; T2S stopping), built from
the shared toolkit (``daemon.sdk.ar.processors.gpt_sovits_chain``):

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
Every step draws, also with top_k = 1, because the VITS noise that follows
comes from the same generator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from daemon.sdk.ar.processors import History, gpt_sovits_chain
from daemon.sdk.ar.sampler import Sampler


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


class TokenSampler:
    """Token choice of one T2S segment: the toolkit's sampler in upstream's
    order, with upstream's two stop rules."""

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
        prompt = np.asarray(prompt, np.int64)
        if prompt.size and (prompt.min() < 0 or prompt.max() >= cfg.eos):
            raise ValueError(f"prompt tokens outside [0, {cfg.eos})")
        self.cfg, self.vocab = cfg, vocab
        self.history = History(vocab, prompt)
        processors, warpers = gpt_sovits_chain(
            cfg.top_k, cfg.top_p, cfg.temperature, cfg.repetition_penalty,
            cfg.eos, cfg.eos_block_steps,
        )  # fmt: skip
        self._sampler = Sampler(vocab, processors, warpers, self.history, rng)

    @property
    def candidates(self) -> np.ndarray:
        """Token ids that had a non-zero probability at the last step."""
        return self._sampler.candidates

    @property
    def probs(self) -> np.ndarray:
        """Their probabilities."""
        return self._sampler.probs

    def step(self, logits: np.ndarray) -> tuple[int, bool]:
        """Sample the next token from ``logits`` [vocab]; returns (token, stop)."""
        choice = self._sampler.step(logits)
        eos = self.cfg.eos
        stop = choice.best == eos or choice.token == eos
        if not stop:
            self._sampler.accept(choice.token)
        return choice.token, stop

    def warmup(self) -> None:
        """Compile the kernel (numba) before the first request needs it."""
        self.step(np.zeros(self.vocab, np.float32))
