"""The prompt, special ids, voices and sampling defaults as upstream has them,
for the bundle's params (docs/qwen3.md, TTS special ids; TTS generation loop).

The template is upstream's own ``Qwen3TTSModel._build_assistant_text`` rendered
with a sentinel; ``generate`` slices its ids by position (``[:, :3]`` role,
``[:, 3:-5]`` text), so the checkpoint's tokenizer must give exactly 3 role
and 5 tail tokens, checked here.  Ids come from config.json and the tokenizer,
never from code defaults; sampling is upstream's ``_merge_generate_kwargs``
itself over the checkpoint's generation_config.json.
"""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any, Final

from daemon.engines.qwen3.tts.params import SPECIAL_IDS, TEXT_FIELD
from scripts.qwen3.tts.pipeline.source import GENERATION, ModelDir

#: a private-use code point: no tokenizer gives it a meaning
_TEXT: Final = "\ue000"
#: generate's position slices (modeling_qwen3_tts.py: input_id[:, :3], [:, 3:-5])
ROLE_TOKENS: Final = 3
TAIL_TOKENS: Final = 5
#: HF's MinNewTokensLengthLogitsProcessor bound upstream's generate hard-codes
#: (modeling_qwen3_tts.py generate: talker_kwargs["min_new_tokens"] = 2)
MIN_NEW_TOKENS: Final = 2
#: upstream's kwarg names -> the params' (sampling)
_RENAMED: Final = {"subtalker_dosample": "subtalker_do_sample"}
_SAMPLING: Final = (
    "do_sample",
    "top_k",
    "top_p",
    "temperature",
    "repetition_penalty",
    "subtalker_dosample",
    "subtalker_top_k",
    "subtalker_top_p",
    "subtalker_temperature",
    "max_new_tokens",
)
#: a text the split is checked on (mixed scripts, as users write)
_SAMPLE: Final = "Hello, 你好."


class PromptError(ValueError):
    """The checkpoint's tokenizer or config cannot give the engine's prompt."""


def render_prompt(tts: Any, tokenizer: Any) -> dict[str, Any]:
    """``{"template", "role_tokens", "tail_tokens"}`` from upstream's builder,
    checked against the tokenizer's split of it."""
    text = tts._build_assistant_text(_TEXT)
    if text.count(_TEXT) != 1:
        raise PromptError(
            f"upstream's assistant text renders the text "
            f"{text.count(_TEXT)} times: {text!r}"
        )
    head, tail = text.split(_TEXT)
    role, end = (tokenizer(t)["input_ids"] for t in (head, tail))
    whole = tokenizer(head + _SAMPLE + tail)["input_ids"]
    n_head, n_tail = len(role), len(end)
    if (n_head, n_tail) != (ROLE_TOKENS, TAIL_TOKENS) or (
        whole[:n_head] != role or whole[-n_tail:] != end
    ):
        raise PromptError(
            f"the tokenizer splits the role {head!r} into {n_head} tokens and the "
            f"tail {tail!r} into {n_tail}; upstream's generate slices exactly "
            f"{ROLE_TOKENS} and {TAIL_TOKENS} (add 'assistant' as one token)"
        )
    return {
        "template": head + TEXT_FIELD + tail,
        "role_tokens": ROLE_TOKENS,
        "tail_tokens": TAIL_TOKENS,
    }


def token_ids(src: ModelDir, tokenizer: Any, template: str) -> dict[str, int]:
    """The ids the engine uses: config.json's, and the role's from the
    tokenizer; PromptError when the two disagree."""
    c, t = src.config, src.talker
    role = tokenizer(template.split(TEXT_FIELD)[0])["input_ids"]
    if role[0] != c.im_start_token_id:
        raise PromptError(
            f"{src.root / 'config.json'}: im_start_token_id is "
            f"{c.im_start_token_id}, the tokenizer's <|im_start|> is {role[0]}"
        )
    return {
        "tts_pad": c.tts_pad_token_id,
        "tts_bos": c.tts_bos_token_id,
        "tts_eos": c.tts_eos_token_id,
        "im_start": c.im_start_token_id,
        "assistant": int(role[1]),
        "newline": int(role[2]),
        "codec_pad": t.codec_pad_id,
        "codec_bos": t.codec_bos_id,
        "codec_eos": t.codec_eos_token_id,
        "codec_think": t.codec_think_id,
        "codec_nothink": t.codec_nothink_id,
        "codec_think_bos": t.codec_think_bos_id,
        "codec_think_eos": t.codec_think_eos_id,
    }


def speakers(src: ModelDir) -> dict[str, dict[str, Any]]:
    """config.json's spk_id + spk_is_dialect (Base: none)."""
    t = src.talker
    if src.kind == "base":
        return {}
    return {
        name: {"id": row, "dialect": t.spk_is_dialect[name] or None}
        for name, row in t.spk_id.items()
    }


def sampling(src: ModelDir, model_cls: Any) -> dict[str, Any]:
    """Upstream's ``_merge_generate_kwargs`` over generation_config.json (the
    keys it sets win over upstream's hard defaults), plus generate's fixed
    min_new_tokens and suppress range."""
    merged = model_cls._merge_generate_kwargs(
        SimpleNamespace(generate_defaults=src.generation.given())
    )
    missing = [k for k in _SAMPLING if k not in merged]
    if missing:
        raise PromptError(
            f"upstream's _merge_generate_kwargs no longer gives "
            f"{missing} (read {GENERATION} again)"
        )
    out = {_RENAMED.get(k, k): merged[k] for k in _SAMPLING}
    vocab = src.talker.vocab_size
    out["min_new_tokens"] = MIN_NEW_TOKENS
    out["suppress"] = [vocab - SPECIAL_IDS, vocab]
    return out


def text_mode(src: ModelDir, model_cls: Any) -> str:
    """Upstream's default text mode of the checkpoint's entry point
    (generate_custom_voice: non-streaming; generate_voice_clone: streaming)."""
    entry = {"custom_voice": "generate_custom_voice", "base": "generate_voice_clone"}[
        src.kind
    ]
    default = (
        inspect.signature(getattr(model_cls, entry))
        .parameters["non_streaming_mode"]
        .default
    )
    return "non_streaming" if default else "streaming"
