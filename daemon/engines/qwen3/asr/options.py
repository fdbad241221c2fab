"""Per-session settings of the ``qwen3-asr`` engine, checked when it opens.

``TranscriptionOptions``: ``language`` forces the language (a code such as
"zh" / "en_US" or an upstream name; upstream appends ``language X<asr_text>``
to the prompt then), ``prompt`` is upstream's ``context`` (the system turn).
``extra`` may carry sampling knobs, applied in HF transformers' order through
the shared toolkit (daemon/sdk/ar): ``temperature`` (absent or 0: greedy,
upstream's default and vLLM's 0.0), ``top_k``, ``top_p``, ``repetition_penalty``,
``seed``; ``max_new_tokens`` (at most the bundle's); ``max_segment_s``, the
longest segment long audio is cut into (at most what the prompt bucket holds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

import msgspec
import numpy as np

from daemon.config.reader import read
from daemon.engines.qwen3.asr.params import ENGINE_ID, AsrParams
from daemon.engines.qwen3.asr.prompt import language_name
from daemon.engines.qwen3.common.options import check_finite, max_new_tokens
from daemon.sdk.ar.draws import request_rng
from daemon.sdk.ar.loop import Choose
from daemon.sdk.ar.processors import History, RepetitionPenalty, hf_chain
from daemon.sdk.ar.sampler import Sampler
from daemon.sdk.asr import TranscriptionOptions

Positive = Annotated[float, msgspec.Meta(gt=0)]


class Extra(msgspec.Struct, frozen=True):
    """The ``TranscriptionOptions.extra`` keys this engine understands."""

    temperature: Annotated[float, msgspec.Meta(ge=0)] | None = None
    top_k: Annotated[int, msgspec.Meta(ge=0)] | None = None
    top_p: Annotated[float, msgspec.Meta(gt=0, le=1)] | None = None
    repetition_penalty: Positive | None = None
    seed: int | None = None
    max_new_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    max_segment_s: Positive | None = None

    def __post_init__(self) -> None:
        check_finite(self, ("temperature", "repetition_penalty", "max_segment_s"))


@dataclass(frozen=True)
class Request:
    """One session's settings, checked."""

    context: str
    #: upstream's name of the forced language; None lets the model say it
    language: str | None
    max_new_tokens: int
    #: the longest segment the caller asked for (s); None: what the graphs hold
    max_segment_s: float | None
    temperature: float
    top_k: int | None
    top_p: float
    repetition_penalty: float
    seed: int | None

    @classmethod
    def from_options(cls, options: TranscriptionOptions, p: AsrParams) -> Request:
        """ValueError for an option this engine refuses (before any graph call)."""
        extra = read(dict(options.extra), Extra, where=ENGINE_ID)
        language = None
        if options.language is not None and options.language.strip():
            language = language_name(options.language, p.languages)
        max_new = max_new_tokens(ENGINE_ID, extra.max_new_tokens, p.max_new_tokens)
        return cls(
            context=options.prompt or "",
            language=language,
            max_new_tokens=max_new,
            max_segment_s=extra.max_segment_s,
            temperature=extra.temperature or 0.0,
            top_k=extra.top_k or None,
            top_p=1.0 if extra.top_p is None else extra.top_p,
            repetition_penalty=extra.repetition_penalty or 1.0,
            seed=extra.seed,
        )

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def chooser(self, vocab: int, eos: Sequence[int], prompt: np.ndarray) -> Choose:
        """Each step's (token, stop): greedy (processors only) or sampled, HF's
        chain; stop at any EOS id, which is not part of the history."""
        history = History(vocab, prompt)
        if self.greedy:
            processors = [RepetitionPenalty(self.repetition_penalty)]
            sampler = Sampler(vocab, processors, [], history, rng=None)
        else:
            processors, warpers = hf_chain(
                self.top_k, self.top_p, self.temperature,
                self.repetition_penalty, eos[0],
            )  # fmt: skip
            sampler = Sampler(
                vocab, processors, warpers, history, request_rng(self.seed)
            )
        stops = frozenset(int(e) for e in eos)

        def choose(logits: np.ndarray) -> tuple[int, bool]:
            token = sampler.step(logits).token
            stop = token in stops
            if not stop:
                sampler.accept(token)
            return token, stop

        return choose
