"""The tiny Qwen2-style byte-level BPE of the tiny Qwen3-TTS checkpoints.

Trained with ``tokenizers`` on a fixed English + Chinese corpus and wrapped in
``Qwen2TokenizerFast`` (what upstream's processor loads). The specials follow
docs/qwen3.md, tiny models. ``assistant``, ``user`` and ``system`` are single BPE tokens
(the corpus repeats them), because upstream's ``generate`` slices the prompt by
position: the role ``<|im_start|>assistant\\n`` must be 3 tokens.
"""

from __future__ import annotations

from typing import Any, Final

#: The Qwen3 family specials (docs/qwen3.md, tiny models), appended after the BPE
#: vocabulary in this order, as the real vocabulary has them after its merges.
SPECIAL_TOKENS: Final = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|audio_start|>",
    "<|audio_end|>",
    "<|audio_pad|>",
    "<asr_text>",
    "<tts_pad>",
    "<tts_text_bos>",
    "<tts_text_eod>",
)
#: Words the prompt templates need as single tokens (role rows).
ROLE_WORDS: Final = ("assistant", "user", "system")
#: BPE size before the added tokens: 256 byte symbols plus merges.
BPE_VOCAB: Final = 400
#: Qwen2's pre-tokenizer split (tokenizer.json of the Qwen2/Qwen3 checkpoints).
QWEN2_SPLIT: Final = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"
    r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_CORPUS: Final = (
    "The quick brown fox jumps over the lazy dog.",
    "Hello, how are you today? I am fine, thank you.",
    "Please turn on the kitchen lights and set the timer for ten minutes.",
    "What is the weather like in Berlin tomorrow morning?",
    "I like to listen to music and read books.",
    "This is a test of the speech synthesis system, one two three.",
    "今天天气很好，我们去公园散步吧。",
    "你好，请问现在几点了？",
    "我喜欢听音乐，也喜欢看书。",
    "请把客厅的灯打开，谢谢。",
    "语音合成系统正在测试中，一二三四五。",
)
#: How often the role words repeat in the corpus: enough for their merges to win.
_ROLE_REPEATS: Final = 40


def train_tokenizer() -> Any:
    """The tiny BPE in Qwen2TokenizerFast (eos <|im_end|>, pad <|endoftext|>)."""
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
    trainer = trainers.BpeTrainer(
        vocab_size=BPE_VOCAB,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([*_CORPUS, *ROLE_WORDS * _ROLE_REPEATS], trainer=trainer)
    bpe.add_special_tokens([AddedToken(t, special=True) for t in SPECIAL_TOKENS])
    tok = Qwen2TokenizerFast(
        tokenizer_object=bpe,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
    )
    for word in ROLE_WORDS:
        if len(tok(word)["input_ids"]) != 1:
            raise AssertionError(f"{word!r} is not one token: raise _ROLE_REPEATS")
    return tok
