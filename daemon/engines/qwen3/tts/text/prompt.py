"""The talker's prompt, row by row as upstream ``generate`` builds it.

Upstream: inference/qwen3_tts_model.py ``_build_assistant_text`` renders
``<|im_start|>assistant\\n{text}<|im_end|>\\n<|im_start|>assistant\\n``;
core/models/modeling_qwen3_tts.py ``Qwen3TTSForConditionalGeneration.generate``
slices its ids **by position** (role ``[:3]``, text ``[3:-5]``, text without its
first token ``[4:-5]``) and sums a text channel T(x) = text_projection(
text_embedding(x)) with a codec channel C(x) = codec_embedding(x) per row
(docs/qwen3.md, TTS prompt)::

    role      T(ids[:3])                                            3 rows
    prefix    T(tts_pad) * (K-2), T(tts_bos)  +  C(codec rows[:-1])    K-1 rows
              codec rows: [nothink, think_bos, think_eos] (auto) or
              [think, think_bos, language, think_eos], then the speaker row
              (C(spk_id) or an x-vector) if any, then [codec_pad, codec_bos]
    streaming      T(ids[3]) + C(codec_bos); trailing T(ids[4:-5]), T(tts_eos)
    non-streaming  T(ids[3:-5]), T(tts_eos)  +  C(codec_pad) each, then
                   T(tts_pad) + C(codec_bos); trailing T(tts_pad)

A dialect speaker speaking Chinese (or auto) swaps the language row for its
dialect's.  The trailing rows are added to the talker's input one per decode
step; once used up, T(tts_pad) is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

import numpy as np

from daemon.engines.qwen3.tts.params import TEXT_FIELD, TtsParams

if TYPE_CHECKING:
    from tokenizers import Tokenizer

TextMode = Literal["non_streaming", "streaming"]
#: upstream's language that asks for no language row (``language.lower()``)
AUTO: Final = "auto"
#: languages a dialect speaker's dialect replaces (upstream ``generate``)
DIALECT_SWAPS: Final = ("chinese", AUTO)
#: [rows, Dt] float32 text embeddings -> [rows, Ht] float32 (the text_proj graph)
Project = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Prompt:
    """One utterance's talker input."""

    ids: np.ndarray  # int32: the rendered template's token ids
    embeds: np.ndarray  # float32 [S, Ht]: the prefill rows
    trailing: np.ndarray  # float32 [N, Ht]: one per decode step, then ``pad``
    pad: np.ndarray  # float32 [Ht]: T(tts_pad)

    @property
    def length(self) -> int:
        return len(self.embeds)

    def text_row(self, step: int) -> np.ndarray:
        """What decode step ``step`` (0, 1, ...) adds to its codec rows."""
        return self.trailing[step] if step < len(self.trailing) else self.pad


class PromptBuilder:
    """Tokenises and embeds prompts of one bundle."""

    def __init__(
        self,
        p: TtsParams,
        tokenizer: Tokenizer,
        text_embedding: np.ndarray,
        codec_embedding: np.ndarray,
        project: Project,
    ) -> None:
        self.p, self.tokenizer = p, tokenizer
        self.text_embedding, self.codec_embedding = text_embedding, codec_embedding
        self.project = project
        t = p.tokens
        bos, eos, pad = self._text([t.tts_bos, t.tts_eos, t.tts_pad])
        self.tts_bos, self.tts_eos, self.tts_pad = bos, eos, pad
        self._head, self._tail = p.prompt.template.split(TEXT_FIELD)

    def ids(self, text: str) -> np.ndarray:
        """int32 ids of the rendered template (the HF fast tokenizer's
        ``__call__`` is this ``encode``, special tokens added as configured)."""
        rendered = self._head + text + self._tail
        return np.asarray(self.tokenizer.encode(rendered).ids, np.int32)

    def text_tokens(self, text: str) -> int:
        """Tokens of ``text`` as upstream slices them (``ids[3:-5]``)."""
        pr = self.p.prompt
        return len(self.ids(text)) - pr.role_tokens - pr.tail_tokens

    def length(
        self,
        n_text: int,
        mode: TextMode,
        language: str = AUTO,
        speaker: str | None = None,
        xvector: bool = False,
    ) -> int:
        """Prefill rows of a prompt with ``n_text`` text tokens: role, the codec
        prefix (K - 1 of its K rows), the text rows of ``mode``."""
        lang_row = self.language_id(language, speaker) is not None
        codec = (4 if lang_row else 3) + int(speaker is not None or xvector) + 2
        text = n_text + 2 if mode == "non_streaming" else 1
        return self.p.prompt.role_tokens + codec - 1 + text

    def language_id(self, language: str, speaker: str | None) -> int | None:
        """The codec language row (None: auto), the dialect swap applied."""
        lang = language.lower()
        if lang != AUTO and lang not in self.p.languages:
            raise ValueError(
                f"qwen3-tts: unknown language {language!r}; "
                f"known: {', '.join(self.p.advertised_languages)}"
            )
        lang_id = None if lang == AUTO else self.p.languages[lang]
        if speaker is not None and lang in DIALECT_SWAPS:
            dialect = self._speaker(speaker).dialect
            if dialect is not None:
                lang_id = self.p.languages[dialect]
        return lang_id

    def build(
        self,
        text: str,
        language: str = AUTO,
        speaker: str | None = None,
        xvector: np.ndarray | None = None,
        mode: TextMode = "non_streaming",
    ) -> Prompt:
        """The prompt of ``text``; ``speaker`` (CustomVoice) or ``xvector``
        (Base clone, float32 [Ht]) gives the speaker row, neither none."""
        if speaker is not None and xvector is not None:
            raise ValueError("qwen3-tts: a speaker or an x-vector, not both")
        t, pr = self.p.tokens, self.p.prompt
        ids = self.ids(text)
        n_text = len(ids) - pr.role_tokens - pr.tail_tokens
        if n_text < 1:
            raise ValueError(f"qwen3-tts: no text tokens in {text!r}")
        lang_id = self.language_id(language, speaker)
        prefix = (
            [t.codec_nothink, t.codec_think_bos, t.codec_think_eos]
            if lang_id is None
            else [t.codec_think, t.codec_think_bos, lang_id, t.codec_think_eos]
        )
        codec = [self._codec(prefix)]
        if speaker is not None:
            codec.append(self._codec([self._speaker(speaker).id]))
        elif xvector is not None:
            codec.append(self._xvector(xvector))
        codec.append(self._codec([t.codec_pad, t.codec_bos]))
        c = np.concatenate(codec)
        k = len(c)
        # role rows and the text in one projection (rows are independent)
        text_end = len(ids) - pr.tail_tokens
        projected = self._text(ids[:text_end])
        role, words = projected[: pr.role_tokens], projected[pr.role_tokens :]
        pads = np.concatenate(
            [np.repeat(self.tts_pad[None], k - 2, 0), self.tts_bos[None]]
        )
        rows = [role, pads + c[:-1]]
        if mode == "streaming":
            rows.append(words[:1] + c[-1:])
            trailing = np.concatenate([words[1:], self.tts_eos[None]])
        elif mode == "non_streaming":
            pad_row = self._codec([t.codec_pad])
            rows.append(np.concatenate([words, self.tts_eos[None]]) + pad_row)
            rows.append(self.tts_pad[None] + c[-1:])
            trailing = self.tts_pad[None]
        else:
            raise ValueError(f"qwen3-tts: unknown text mode {mode!r}")
        embeds = np.ascontiguousarray(np.concatenate(rows), np.float32)
        return Prompt(ids, embeds, np.ascontiguousarray(trailing), self.tts_pad)

    # --- rows -------------------------------------------------------------------
    def _text(self, ids: np.ndarray | list[int]) -> np.ndarray:
        rows = np.asarray(self.text_embedding[np.asarray(ids)], np.float32)
        return np.asarray(self.project(rows), np.float32)

    def _codec(self, ids: list[int]) -> np.ndarray:
        return np.asarray(self.codec_embedding[ids], np.float32)

    def _xvector(self, xvector: np.ndarray) -> np.ndarray:
        x = np.asarray(xvector, np.float32).reshape(-1)
        if x.shape != (self.p.talker.hidden,) or not np.isfinite(x).all():
            raise ValueError(
                f"qwen3-tts: an x-vector must be {self.p.talker.hidden} finite "
                f"floats, found shape {list(np.shape(xvector))}"
            )
        return x[None]

    def _speaker(self, name: str):  # -> params.Speaker
        found = self.p.speakers.get(name) or self.p.speakers.get(name.lower())
        if found is None:
            raise ValueError(
                f"qwen3-tts: unknown speaker {name!r}; "
                f"known: {', '.join(self.p.speakers) or 'none (a Base bundle)'}"
            )
        return found
