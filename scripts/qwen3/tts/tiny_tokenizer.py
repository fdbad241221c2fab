"""The tiny Qwen2-style byte-level BPE of the tiny Qwen3-TTS checkpoints.

Trained on a fixed English + Chinese corpus by the Qwen3 builds' one trainer
(scripts/qwen3/common/tiny_bpe.py: ``tokenizers`` with Qwen2's
pre-tokenizer, wrapped in ``Qwen2TokenizerFast``, what upstream's processor
loads). The specials follow docs/qwen3.md, tiny models. ``assistant``,
``user`` and ``system`` are single BPE tokens (the corpus repeats them),
because upstream's ``generate`` slices the prompt by position: the role
``<|im_start|>assistant\\n`` must be 3 tokens.
"""

from __future__ import annotations

from typing import Any, Final

from scripts.qwen3.common import tiny_bpe

#: The Qwen3 family specials (docs/qwen3.md, tiny models; tiny_bpe.py names
#: them), appended after the BPE vocabulary in this order, as the real
#: vocabulary has them after its merges.
SPECIAL_TOKENS: Final = (
    *tiny_bpe.TURN_AND_AUDIO,
    tiny_bpe.ASR_TEXT,
    *tiny_bpe.TTS_TOKENS,
)
#: Words the prompt templates need as single tokens (role rows).
ROLE_WORDS: Final = ("assistant", "user", "system")
#: BPE size before the added tokens: 256 byte symbols plus merges.
BPE_VOCAB: Final = 400
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
    """The tiny BPE in Qwen2TokenizerFast (eos <|im_end|>, pad <|endoftext|>):
    scripts/qwen3/common/tiny_bpe.py, the specials after the merges."""
    corpus = [*_CORPUS, *ROLE_WORDS * _ROLE_REPEATS]
    tok = tiny_bpe.train_tokenizer(corpus, BPE_VOCAB, SPECIAL_TOKENS)
    for word in ROLE_WORDS:
        if len(tok(word)["input_ids"]) != 1:
            raise AssertionError(f"{word!r} is not one token: raise _ROLE_REPEATS")
    return tok
