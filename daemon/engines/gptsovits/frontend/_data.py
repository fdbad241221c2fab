"""Readers for the fact tables in ``data/`` beside this module (see each file's header).

The tables were extracted from upstream GPT-SoVITS (commit 48b1a0169a28); they are
data, not code, and are read lazily so that importing the package stays cheap.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

_PACKAGE = "daemon.engines.gptsovits.frontend"
_COMMENT = "#"


def _lines(name: str) -> Iterator[str]:
    ref = resources.files(_PACKAGE).joinpath("data").joinpath(name)
    raw = ref.read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    for line in raw.decode("utf-8").split("\n"):
        if line and not line.startswith(_COMMENT):
            yield line


@cache
def symbols_v2() -> tuple[str, ...]:
    """The v2 phoneme table; a symbol's line index is its id."""
    return tuple(_lines("symbols_v2.txt"))


@cache
def opencpop_strict() -> dict[str, tuple[str, str]]:
    """Toneless pinyin -> (initial symbol, final symbol without tone)."""
    table: dict[str, tuple[str, str]] = {}
    for line in _lines("opencpop_strict.tsv"):
        pinyin, pair = line.split("\t")
        initial, final = pair.split(" ")
        table[pinyin] = (initial, final)
    return table


@cache
def traditional_to_simplified_map() -> dict[int, str]:
    """A ``str.translate`` table: traditional code point -> simplified char."""
    table: dict[int, str] = {}
    for line in _lines("t2s.tsv"):
        trad, simp = line.split("\t")
        table[ord(trad)] = simp
    return table


@cache
def zh_rules() -> dict[str, frozenset[str]]:
    """Word lists of the tone-sandhi and erhua rules."""
    ref = resources.files(_PACKAGE).joinpath("data").joinpath("zh_rules.json")
    raw: dict[str, Any] = json.loads(ref.read_text(encoding="utf-8"))
    return {k: frozenset(v) for k, v in raw.items() if not k.startswith("_")}


@cache
def polyphonic_words() -> dict[str, tuple[str, ...]]:
    """Word -> tone3 pinyin per char: upstream's polyphone correction dictionary."""
    table: dict[str, tuple[str, ...]] = {}
    for line in _lines("polyphonic.tsv.gz"):
        word, readings = line.split("\t")
        table[word] = tuple(readings.split(" "))
    return table
