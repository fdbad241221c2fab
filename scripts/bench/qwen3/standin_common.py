"""What the Qwen3-ASR and Qwen3-TTS stand-in bundles share: the logits
projection's constants, the CPU embedding tables, and a synthetic byte-level
BPE tokenizer (Qwen's tokenizers are byte-level BPE, the specials after the
BPE ids)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: input dims of the logits projection (x[:PROJ], cos[:PROJ]): few, so the
#: stand-in (which runs on the host CPU here, unlike the NPU) evicts little of
#: the caches the engine's step then uses
PROJ: Final = 4
BLOCKED: Final = -1e4  # fp16-safe "never chosen"
EMBED_STD: Final = 0.05  # about a trained table's row scale
#: what the merges are made of; U+0120 is the byte-level space
LETTERS: Final = "abcdefghijklmnopqrstuvwxyz\u0120"
#: byte-level BPE's base alphabet: one token per byte, before any merge
BYTE_TOKENS: Final = 256


def byte_level_bpe(words: Sequence[str]) -> Tokenizer:
    """The 256 bytes, then ``words`` in order, each the merge of its prefix
    with its last letter (so every piece is whole UTF-8); no specials yet."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    base = len(vocab)
    vocab.update((w, base + i) for i, w in enumerate(words))
    tok = Tokenizer(models.BPE(vocab, [(w[:-1], w[-1]) for w in words]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def save_table(path: Path, rng: np.random.Generator, shape: tuple[int, ...]) -> None:
    """A random fp16 embedding table of a trained one's row scale at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = rng.standard_normal(shape, np.float32) * EMBED_STD
    np.save(path, table.astype(np.float16))
