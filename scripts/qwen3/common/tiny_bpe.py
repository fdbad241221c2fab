"""The tiny byte-level BPE of the tiny Qwen3 checkpoints (ASR and TTS).

Trained with ``tokenizers`` on a build's fixed corpus with Qwen2's
pre-tokenizer, its special tokens added, and wrapped in ``Qwen2TokenizerFast``
(what upstream's processors load), eos ``<|im_end|>`` and pad
``<|endoftext|>`` as the real checkpoints have them (docs/qwen3.md, tiny
models).  The same corpus gives the same bytes.  Tests and scripts only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

#: Qwen2's pre-tokenizer split (tokenizer.json of the Qwen2/Qwen3 checkpoints).
QWEN2_SPLIT: Final = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"
    r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
EOS: Final = "<|im_end|>"
PAD: Final = "<|endoftext|>"
#: The Qwen3 family's special tokens (docs/qwen3.md, tiny models): the turns'
#: and the audio's, the ASR answer's tag, and the TTS text's; each tiny
#: tokenizer names the ones it has, in its vocabulary's order.
TURN_AND_AUDIO: Final = (
    PAD,
    "<|im_start|>",
    EOS,
    "<|audio_start|>",
    "<|audio_end|>",
    "<|audio_pad|>",
)
ASR_TEXT: Final = "<asr_text>"
TTS_TOKENS: Final = ("<tts_pad>", "<tts_text_bos>", "<tts_text_eod>")


def train_tokenizer(
    corpus: Sequence[str],
    vocab_size: int,
    specials: Sequence[str],
    *,
    specials_first: bool = False,
    added: Sequence[str] = (),
    extra_special_tokens: Mapping[str, str] | None = None,
) -> Any:
    """A ``Qwen2TokenizerFast`` over a BPE of ``vocab_size`` learnt from
    ``corpus``: the ``specials`` (special tokens, in this order) after the
    merges, or (``specials_first``) at ids 0.. before the byte symbols; then
    the ``added`` tokens, not special; ``extra_special_tokens`` as the
    processor names them (e.g. ``audio_token``)."""
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        trainers,
    )
    from transformers import Qwen2TokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    bpe.decoder = decoders.ByteLevel()
    special = [AddedToken(t, special=True) for t in specials]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        # the trainer gives its special tokens the first ids, in this order
        special_tokens=special if specials_first else [],
    )
    bpe.train_from_iterator(list(corpus), trainer=trainer)
    bpe.add_special_tokens(special)  # appended unless the trainer placed them
    if added:
        bpe.add_tokens([AddedToken(t, special=False) for t in added])
    extra = {"extra_special_tokens": dict(extra_special_tokens or {})}
    return Qwen2TokenizerFast(
        tokenizer_object=bpe,
        bos_token=None,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=None,
        **(extra if extra_special_tokens else {}),
    )
