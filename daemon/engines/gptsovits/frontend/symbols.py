"""GPT-SoVITS v2 phoneme symbols (symbols2, 732 entries) and their ids."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import numpy as np

from daemon.engines.gptsovits.frontend._data import symbols_v2

# Sizes from docs/gpt-sovits.md, symbol table: T2S phoneme_vocab_size and enc_p text
# embedding.
V2_SYMBOL_COUNT = 732
UNK = "UNK"
# Punctuation phones the Chinese and English G2P emit as themselves.
PUNCTUATION = ("!", "?", "…", ",", ".", "-")


def symbols() -> tuple[str, ...]:
    table = symbols_v2()
    if len(table) != V2_SYMBOL_COUNT:
        raise RuntimeError(
            f"symbol table has {len(table)} entries, want {V2_SYMBOL_COUNT}"
        )
    return table


@cache
def symbol_ids() -> dict[str, int]:
    return {s: i for i, s in enumerate(symbols())}


def phones_to_ids(phones: Iterable[str]) -> np.ndarray:
    """Map phones to ids; unknown symbols become UNK as upstream's cleaner does."""
    table = symbol_ids()
    unk = table[UNK]
    return np.fromiter((table.get(p, unk) for p in phones), dtype=np.int64)
