"""Upstream reference runs of Qwen3-ASR (qwen-asr 0.0.6): the parity oracle.

Every answer comes from upstream's own code: its Auto classes and processor,
its prompt builders (``Qwen3ASRModel._build_text_prompt``), ``generate``, its
window mask (``Qwen3ASRAudioEncoder._prepare_attention_mask``) and
``parse_asr_output``. Scripts and tests only: qwen_asr and torch are imported
lazily, and never by the board runtime.

Attention windows (docs/qwen3.md, ASR encoder windows): upstream's FA2/vLLM backends
attend within windows of 13 * n_window_infer / 100 tokens, its transformers eager/SDPA
path over the whole utterance. ``windowed_attention(model)`` makes the eager/SDPA
encoder layers take upstream's window mask, so every run here can follow the
production semantics; ``encode_windowed`` and ``greedy`` use it by default.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

#: Upstream's sample rate (inference/utils.py:SAMPLE_RATE).
SAMPLE_RATE: Final = 16000
#: The tokens upstream's ``generate`` stops at: its default eos_token_id
#: [151645, 151643] names these in the real vocabulary; a tiny vocabulary has
#: other ids for them (docs/qwen3.md, ASR prompt and special ids).
EOS_TOKENS: Final = ("<|im_end|>", "<|endoftext|>")
#: Upstream's transformers backend default (Qwen3ASRModel max_new_tokens).
MAX_NEW_TOKENS: Final = 512


def load(model_dir: Path | str) -> tuple[Any, Any]:
    """(model, processor) from a checkpoint directory: fp32, eval, CPU."""
    import qwen_asr.inference.qwen3_asr  # noqa: F401  (registers the Auto classes)
    import torch
    from transformers import AutoModel, AutoProcessor

    model = AutoModel.from_pretrained(str(model_dir), dtype=torch.float32)
    # as Qwen3ASRModel.from_pretrained loads it
    processor = AutoProcessor.from_pretrained(str(model_dir), fix_mistral_regex=True)
    return model.float().eval(), processor


def normalize(pcm: np.ndarray, sample_rate: int) -> np.ndarray:
    """Mono 16 kHz float32 in [-1, 1], as upstream's transcribe normalises."""
    from qwen_asr.inference.utils import normalize_audios

    return normalize_audios([(np.asarray(pcm), int(sample_rate))])[0]


def features(processor: Any, pcm16k: np.ndarray) -> tuple[np.ndarray, int]:
    """(log-mel [M, F] float32, valid frames) as the processor makes them."""
    out = processor(text=[processor.audio_token], audio=[pcm16k], return_tensors="np")
    n_frames = int(out["feature_attention_mask"][0].sum())
    return out["input_features"][0].astype(np.float32), n_frames


@contextmanager
def windowed_attention(model: Any) -> Iterator[None]:
    """Upstream's window mask into every audio encoder layer while inside.

    The encoder calls each layer as ``layer(hidden, cu_seqlens)`` without a
    mask; a forward pre-hook adds ``attention_mask`` built by upstream's own
    ``_prepare_attention_mask`` from those same cu_seqlens (eager and SDPA both
    add it to the scores)."""
    tower = model.thinker.audio_tower

    def add_mask(_layer: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        hidden, cu_seqlens = args[0], args[1]
        mask = tower._prepare_attention_mask(hidden, cu_seqlens)
        return args, {**kwargs, "attention_mask": mask}

    handles = [
        layer.register_forward_pre_hook(add_mask, with_kwargs=True)
        for layer in tower.layers
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def encode(model: Any, mel: np.ndarray, windowed: bool = True) -> np.ndarray:
    """Upstream audio_tower output [N, D] for one utterance's mel [M, F], in
    the tower's dtype."""
    import torch

    tower = model.thinker.audio_tower
    dtype = next(tower.parameters()).dtype  # float64 for the floor's reference
    feats = torch.from_numpy(np.ascontiguousarray(mel, dtype=np.float32)).to(dtype)
    lens = torch.tensor([feats.shape[1]], dtype=torch.long)
    with torch.no_grad():
        if windowed:
            with windowed_attention(model):
                out = tower(feats, feature_lens=lens)
        else:
            out = tower(feats, feature_lens=lens)
    return out.last_hidden_state.numpy()


def encode_windowed(model: Any, mel: np.ndarray) -> np.ndarray:
    """The FA2/vLLM semantics: attention within upstream's windows."""
    return encode(model, mel, windowed=True)


def encode_sdpa(model: Any, mel: np.ndarray) -> np.ndarray:
    """Upstream's transformers path as is: attention over the whole utterance."""
    return encode(model, mel, windowed=False)


def _prompter(processor: Any) -> Any:
    """A Qwen3ASRModel that only builds prompts: its prompt methods read
    nothing but ``self.processor`` (inference/qwen3_asr.py)."""
    from qwen_asr.inference.qwen3_asr import Qwen3ASRModel

    prompter = Qwen3ASRModel.__new__(Qwen3ASRModel)
    prompter.processor = processor
    return prompter


def language_name(language: str | None) -> str | None:
    """Upstream's canonical language name (``transcribe``'s check), or None."""
    from qwen_asr.inference.utils import normalize_language_name, validate_language

    if language is None or not str(language).strip():
        return None
    name = normalize_language_name(str(language))
    validate_language(name)
    return name


def prompt_text(processor: Any, context: str = "", language: str | None = None) -> str:
    """The prompt string upstream builds (one <|audio_pad|> before expansion)."""
    return _prompter(processor)._build_text_prompt(context, language_name(language))


def prompt_ids(
    processor: Any, n_audio: int, context: str = "", language: str | None = None
) -> list[int]:
    """Prompt ids with the audio pad expanded to ``n_audio`` rows, by the
    processor's own expansion and tokenizer call."""
    text = prompt_text(processor, context, language)
    (expanded,) = processor.replace_multimodal_special_tokens([text], iter([n_audio]))
    return list(processor.tokenizer(expanded)["input_ids"])


def inputs(
    processor: Any, pcm16k: np.ndarray, context: str = "", language: str | None = None
) -> Any:
    """The model inputs exactly as ``_infer_asr_transformers`` makes them."""
    text = prompt_text(processor, context, language)
    return processor(text=[text], audio=[pcm16k], return_tensors="pt", padding=True)


def eos_ids(processor: Any) -> list[int]:
    """The ids of the tokens upstream's generate stops at, in this vocabulary."""
    return [processor.tokenizer.convert_tokens_to_ids(t) for t in EOS_TOKENS]


@contextmanager
def _record_lm_head(model: Any) -> Iterator[list[Any]]:
    """Raw LM-head outputs of every forward while inside (the ncnn port's hook)."""
    seen: list[Any] = []

    def keep(_module: Any, _args: Any, out: Any) -> None:
        seen.append(out.detach()[0].clone())

    handle = model.thinker.lm_head.register_forward_hook(keep)
    try:
        yield seen
    finally:
        handle.remove()


@dataclass(frozen=True)
class Greedy:
    """One upstream greedy run."""

    ids: list[int]
    """The generated ids, the stopping EOS included when reached."""
    text: str
    """Upstream's decode of ``ids`` (special tokens skipped)."""
    logits: np.ndarray
    """Raw LM-head logits [len(ids), V]: row i chose ids[i]."""
    prompt: list[int]
    """The prompt ids (audio pads expanded)."""


def greedy(
    model: Any,
    processor: Any,
    pcm16k: np.ndarray,
    context: str = "",
    language: str | None = None,
    max_new_tokens: int = MAX_NEW_TOKENS,
    windowed: bool = True,
) -> Greedy:
    """Upstream ``generate`` (greedy) on one 16 kHz utterance."""
    import torch

    batch = inputs(processor, pcm16k, context, language)
    n_prompt = batch["input_ids"].shape[1]
    with torch.no_grad(), _record_lm_head(model) as seen:
        with windowed_attention(model) if windowed else _nothing():
            out = model.generate(
                **batch,
                max_new_tokens=max_new_tokens,
                eos_token_id=eos_ids(processor),
                do_sample=False,
            )
    ids = out.sequences[0, n_prompt:].tolist()
    # the prefill records every prompt row, each later step one row
    rows = [seen[0][-1], *(s[-1] for s in seen[1:])][: len(ids)]
    return Greedy(
        ids=ids,
        text=decode(processor.tokenizer, ids),
        logits=torch.stack(rows).numpy() if rows else np.zeros((0, 0), np.float32),
        prompt=batch["input_ids"][0].tolist(),
    )


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def teacher_forced_logits(
    model: Any, batch: Any, tokens: Sequence[int], windowed: bool = True
) -> np.ndarray:
    """Raw LM-head logits [len(tokens), V] with the decoder forced onto
    ``tokens``: row i is the prediction after the prompt and tokens[:i]. One
    upstream forward over prompt + tokens[:-1] (equal to generate's cached
    steps, docs/qwen3.md, export findings)."""
    import torch

    if not tokens:
        return np.zeros((0, 0), np.float32)
    prompt = batch["input_ids"]
    forced = torch.tensor([list(tokens[:-1])], dtype=prompt.dtype)
    ids = torch.cat([prompt, forced], dim=1)
    feeds = {k: v for k, v in batch.items() if k not in ("input_ids", "attention_mask")}
    with torch.no_grad(), _record_lm_head(model) as seen:
        with windowed_attention(model) if windowed else _nothing():
            model.thinker(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                use_cache=False,
                **feeds,
            )
    start = prompt.shape[1] - 1
    return seen[0][start : start + len(tokens)].numpy()


def decode(tokenizer: Any, ids: Sequence[int]) -> str:
    """Upstream's decode of generated ids (``_infer_asr_transformers``)."""
    return tokenizer.decode(
        list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False
    )


def parse(text: str, language: str | None = None) -> tuple[str, str]:
    """(language, text) by upstream's parse_asr_output."""
    from qwen_asr.inference.utils import parse_asr_output

    return parse_asr_output(text, user_language=language_name(language))
