"""The prompt, as upstream's chat template renders it, tokenised and embedded.

Upstream (inference/qwen3_asr.py ``_build_messages`` / ``_build_text_prompt``,
processing_qwen3_asr.py ``replace_multimodal_special_tokens``; docs/qwen3.md, ASR prompt
and special ids): a system turn with the context, a user turn with one audio item, the
generation prompt, and ``language X<asr_text>`` appended when the language is forced;
the one ``<|audio_pad|>`` expanded to the encoder's N tokens; the audio rows then
replace the pads' embeddings (``get_placeholder_mask`` + ``masked_scatter``).
The bundle carries the template already rendered from the checkpoint's own
(``params.prompt``), with ``{context}`` and ``{audio}`` where they go.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.qwen3.asr.params import (
    AUDIO_FIELD,
    CONTEXT_FIELD,
    LANGUAGE_FIELD,
    AsrParams,
)
from daemon.text.languages import LANGUAGE_CODES

if TYPE_CHECKING:
    from tokenizers import Tokenizer


def language_code(name: str) -> str:
    """The code clients use for an upstream language name (the name if none)."""
    for code, known in LANGUAGE_CODES.items():
        if known == name:
            return code
    return name


def language_name(hint: str, supported: Sequence[str]) -> str:
    """Upstream's name for a language hint: a code ("zh", "en_US", "en-GB") or a
    name in any case (upstream ``normalize_language_name``); ValueError naming
    the supported ones otherwise."""
    s = hint.strip()
    family = s.replace("-", "_").split("_")[0].lower()
    name = LANGUAGE_CODES.get(family) or s[:1].upper() + s[1:].lower()
    if name not in supported:
        codes = [f"{language_code(n)} ({n})" for n in supported]
        raise ValueError(
            f"qwen3-asr: unsupported language {hint!r}; supported: {', '.join(codes)}"
        )
    return name


@dataclass(frozen=True)
class Prompt:
    """One utterance's prompt: token ids and where the audio rows go."""

    ids: np.ndarray  # int32 [S]
    audio_positions: np.ndarray  # int64 [N], ascending
    text: str  # the rendered prompt, pads expanded

    @property
    def length(self) -> int:
        return len(self.ids)


class PromptBuilder:
    """Renders, tokenises and embeds prompts of one bundle."""

    def __init__(self, p: AsrParams, tokenizer: Tokenizer, embed: np.ndarray) -> None:
        self.p, self.tokenizer, self.embed = p, tokenizer, embed
        self.pad_token = tokenizer.id_to_token(p.tokens.audio_pad)
        if self.pad_token is None:
            raise ValueError(
                f"audio pad id {p.tokens.audio_pad} is not in the tokenizer"
            )

    def render(self, context: str, language: str | None, n_audio: int) -> str:
        # the pads go in first: a context may itself contain "{audio}"
        text = self.p.prompt.template.replace(AUDIO_FIELD, self.pad_token * n_audio)
        text = text.replace(CONTEXT_FIELD, context, 1)
        if language:
            text += self.p.prompt.language_suffix.replace(LANGUAGE_FIELD, language)
        return text

    def build(self, context: str, language: str | None, n_audio: int) -> Prompt:
        text = self.render(context, language, n_audio)
        # the HF fast tokenizer's __call__ is this encode (add_special_tokens=True)
        ids = np.asarray(self.tokenizer.encode(text).ids, np.int32)
        positions = np.flatnonzero(ids == self.p.tokens.audio_pad)
        if len(positions) != n_audio:
            raise ValueError(
                f"the prompt holds {len(positions)} audio pads, expected {n_audio} "
                "(does the context contain the pad token?)"
            )
        return Prompt(ids, positions, text)

    def text_tokens(self, context: str, language: str | None) -> int:
        """Prompt tokens besides the audio pads."""
        return self.build(context, language, 0).length

    def embeddings(self, prompt: Prompt, audio: np.ndarray) -> np.ndarray:
        """float32 [S, H]: token embeddings, the audio rows at the pads."""
        x = np.asarray(self.embed[prompt.ids], np.float32)
        if len(audio) != len(prompt.audio_positions):
            raise ValueError(
                f"{len(audio)} audio rows for {len(prompt.audio_positions)} pads"
            )
        if len(audio):
            x[prompt.audio_positions] = audio
        return x
