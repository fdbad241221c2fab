"""The prompt and special ids as upstream builds them, for the bundle's params.

The template is rendered by upstream's own inference code
(``Qwen3ASRModel._build_text_prompt``: the checkpoint's chat template over
``_build_messages``) with sentinels for the context and the forced language, so
``params.prompt`` is exactly what upstream feeds, whatever the checkpoint's
template says (docs/qwen3.md, ASR prompt and special ids).  The ids come from
config.json and the checkpoint's tokenizer, never from code defaults.
"""

from __future__ import annotations

import inspect
from typing import Any, Final

from daemon.engines.qwen3.asr.params import AUDIO_FIELD, CONTEXT_FIELD, LANGUAGE_FIELD
from scripts.qwen3.asr.oracle import EOS_TOKENS
from scripts.qwen3.asr.pipeline.source import ModelConfig

#: Stand-ins rendered through the template, then replaced by the fields; private
#: use code points, so no template or tokenizer gives them a meaning.
_CONTEXT: Final = "\ue000context\ue000"
_LANGUAGE: Final = "\ue001language\ue001"
IM_START: Final = "<|im_start|>"
IM_END: Final = "<|im_end|>"


class PromptError(ValueError):
    """The checkpoint's template or tokenizer cannot give the engine's prompt."""


def render_prompt(asr: Any) -> dict[str, str]:
    """``{"template", "language_suffix"}`` from upstream's ``Qwen3ASRModel``
    ``asr``: the prompt with ``{context}`` and ``{audio}`` (the one audio pad
    the template renders, expanded to N pads by the engine), and what a forced
    language appends, with ``{language}``."""
    audio = asr.processor.audio_token
    bare = asr._build_text_prompt(context="", force_language=None)
    base = asr._build_text_prompt(context=_CONTEXT, force_language=None)
    forced = asr._build_text_prompt(context=_CONTEXT, force_language=_LANGUAGE)
    for field in (CONTEXT_FIELD, AUDIO_FIELD, LANGUAGE_FIELD):
        if field in forced.replace(_CONTEXT, "").replace(_LANGUAGE, ""):
            raise PromptError(
                f"the chat template renders {field} literally; the "
                "engine fills that field in"
            )
    if base.count(_CONTEXT) != 1 or base.replace(_CONTEXT, "") != bare:
        raise PromptError(
            "the chat template does not render the context once, as is (with an "
            f"empty context it gives {bare!r}, with one {base!r})"
        )
    if base.count(audio) != 1:
        raise PromptError(
            f"the chat template renders the audio token {audio!r} "
            f"{base.count(audio)} times, expected once: {base!r}"
        )
    if not forced.startswith(base) or forced[len(base) :].count(_LANGUAGE) != 1:
        raise PromptError(
            f"a forced language does not append to the prompt: {forced!r}"
        )
    return {
        "template": base.replace(_CONTEXT, CONTEXT_FIELD).replace(audio, AUDIO_FIELD),
        "language_suffix": forced[len(base) :].replace(_LANGUAGE, LANGUAGE_FIELD),
    }


def token_ids(processor: Any, config: ModelConfig) -> dict[str, Any]:
    """The special ids the engine uses; PromptError if config.json and the
    tokenizer disagree (the model scatters audio where config.json says)."""
    tok = processor.tokenizer
    vocab = tok.get_vocab()

    def id_of(token: str, what: str) -> int:
        if token not in vocab:
            raise PromptError(f"the tokenizer has no {what} token {token!r}")
        return int(vocab[token])

    thinker = config.thinker_config
    ids = {
        "audio_pad": id_of(processor.audio_token, "audio_token"),
        "audio_start": id_of(processor.audio_bos_token, "audio_bos_token"),
        "audio_end": id_of(processor.audio_eos_token, "audio_eos_token"),
        "im_start": id_of(IM_START, "turn start"),
        "im_end": id_of(IM_END, "turn end"),
        "eos": [id_of(t, "end-of-sequence") for t in EOS_TOKENS],
    }
    for key, name in (
        ("audio_pad", "audio_token_id"),
        ("audio_start", "audio_start_token_id"),
    ):
        if ids[key] != getattr(thinker, name):
            raise PromptError(
                f"config.json thinker_config.{name} is {getattr(thinker, name)}, "
                f"the tokenizer's {key} token is id {ids[key]}"
            )
    default = upstream_eos()
    if thinker.text_config.vocab_size > max(default) and ids["eos"] != default:
        raise PromptError(
            f"eos tokens {EOS_TOKENS} are ids {ids['eos']}, upstream's "
            f"generate stops at {default}"
        )
    return ids


def upstream_eos() -> list[int]:
    """The eos ids upstream's ``generate`` stops at (its signature's default)."""
    from qwen_asr.core.transformers_backend.modeling_qwen3_asr import (
        Qwen3ASRForConditionalGeneration as Model,
    )

    default = inspect.signature(Model.generate).parameters["eos_token_id"].default
    return [default] if isinstance(default, int) else list(default)


def languages() -> list[str]:
    """The language names upstream accepts (inference/utils.py)."""
    from qwen_asr.inference.utils import SUPPORTED_LANGUAGES

    return list(SUPPORTED_LANGUAGES)
