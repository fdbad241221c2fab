"""Text frontend: text -> segments -> phones, word2ph and language tags per part.

Mirrors upstream GPT-SoVITS TextPreprocessor.get_phones_and_bert + cleaner.clean_text
for Chinese input with English words (and English-only input). BERT features are
computed by the engine for Chinese parts only (norm_text + word2ph); English phones
get zero features, which ``Phonemes.bert_mask`` marks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.gptsovits.frontend.en.g2p import EnglishG2P, Pron
from daemon.engines.gptsovits.frontend.en.normalize import normalize_en
from daemon.engines.gptsovits.frontend.lang import Lang, split_languages
from daemon.engines.gptsovits.frontend.split import (
    MAX_SEGMENT_LEN,
    MIN_SEGMENT_LEN,
    Segment,
    split_in_half,
    split_text,
)
from daemon.engines.gptsovits.frontend.symbols import phones_to_ids
from daemon.engines.gptsovits.frontend.zh.g2p import ChineseG2P
from daemon.engines.gptsovits.frontend.zh.normalize import READ_SYMBOLS, normalize_zh
from daemon.engines.gptsovits.frontend.zh.polyphone import PolyphoneResolver
from daemon.text.writing_systems import HAN, LATIN, Coverage

if TYPE_CHECKING:
    from daemon.sdk.cancel import CancelToken

# get_phones_and_bert: fewer phones than this -> retry once with "." in front.
MIN_PHONES = 6
# clean_text: English parts with fewer phones than this get a leading ",".
MIN_EN_PHONES = 4
# clean_special: these chars become "," and every "," phone then this symbol.
_SPECIAL_PAUSES = (("￥", "SP2"), ("^", "SP3"))
_SPACES = re.compile(r" {2,}")
#: What this frontend reads: ideographs as Chinese, Latin letters as English,
#: and the Greek letters it has Chinese names for.
COVERAGE = Coverage(("zh", "en"), frozenset({HAN, LATIN}), READ_SYMBOLS)


@dataclass(frozen=True)
class TextPart:
    lang: Lang
    norm_text: str
    phones: tuple[str, ...]
    word2ph: tuple[int, ...] | None  # Chinese only: phones per char of norm_text


@dataclass(frozen=True)
class Phonemes:
    parts: tuple[TextPart, ...]

    @cached_property
    def phones(self) -> tuple[str, ...]:
        return tuple(p for part in self.parts for p in part.phones)

    @cached_property
    def phone_ids(self) -> np.ndarray:
        """int64 [n_phones] ids in the v2 symbol table."""
        return phones_to_ids(self.phones)

    @property
    def norm_text(self) -> str:
        return "".join(part.norm_text for part in self.parts)

    @cached_property
    def bert_mask(self) -> np.ndarray:
        """bool [n_phones]: True where the phone gets BERT features (Chinese)."""
        return np.concatenate(
            [np.full(len(p.phones), p.lang == "zh") for p in self.parts]
            or [np.zeros(0, bool)]
        )


class TextFrontend:
    """Plain synchronous frontend; build once, call from one thread."""

    def __init__(
        self,
        resolver: PolyphoneResolver | None = None,
        lexicon: Mapping[str, Pron] | None = None,
        max_len: int = MAX_SEGMENT_LEN,
        min_len: int = MIN_SEGMENT_LEN,
    ) -> None:
        if not 0 < min_len <= max_len:
            raise ValueError(f"need 0 < min_len <= max_len, got {min_len}, {max_len}")
        self.max_len, self.min_len = max_len, min_len
        self._zh = ChineseG2P(resolver)
        self._en = EnglishG2P(lexicon)

    def warm_up(self) -> None:
        """Touch every lazily loaded table (jieba, pypinyin, rules, dictionaries)."""
        self._zh.warm_up()
        self.phonemize("你好，hexvoice 1号。")
        split_in_half(Segment("一二三四五六", "sentence"), self._zh.cut)

    def split(self, text: str) -> list[Segment]:
        """Segments to synthesize; ValueError for empty text (see split_text) or
        for text with nothing Chinese or English in it (other scripts: dropped)."""
        if isinstance(text, str):
            text = COVERAGE.speakable(text)
        return split_text(text, self.max_len, self.min_len)

    def split_in_half(self, segment: Segment) -> tuple[Segment, Segment]:
        """Halves of a segment that hit the token cap (see split_in_half)."""
        return split_in_half(segment, self._zh.cut)

    def phonemize(self, text: str, cancel: CancelToken | None = None) -> Phonemes:
        """Phones of one segment's text, part by part; ``cancel`` reaches the
        polyphone resolver, which checks it before each of its graph calls."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        if not text.strip():
            raise ValueError("text is empty: nothing to phonemize")
        result = self._phonemize(text, cancel)
        if len(result.phones) < MIN_PHONES:
            # Upstream retries very short texts once with a leading "." (more context).
            result = self._phonemize("." + text, cancel)
        return result

    def _phonemize(self, text: str, cancel: CancelToken | None) -> Phonemes:
        text = _SPACES.sub(" ", text)
        parts = [
            self._part(lang, chunk, cancel) for lang, chunk in split_languages(text)
        ]
        return Phonemes(tuple(parts))

    def _part(self, lang: Lang, text: str, cancel: CancelToken | None) -> TextPart:
        if lang == "en":
            norm = normalize_en(text)
            en_phones = self._en(norm)
            if len(en_phones) < MIN_EN_PHONES:
                en_phones = [",", *en_phones]
            return TextPart("en", norm, tuple(en_phones), None)
        pause = None
        for char, symbol in _SPECIAL_PAUSES:
            if char in text:
                text, pause = text.replace(char, ","), symbol
                break
        norm = normalize_zh(text)
        zh = self._zh(norm, cancel)
        phones = zh.phones
        if pause is not None:
            phones = tuple(pause if p == "," else p for p in phones)
        if len(zh.word2ph) != len(norm) or sum(zh.word2ph) != len(phones):
            raise RuntimeError(f"word2ph does not cover {norm!r}")  # G2P invariant
        return TextPart("zh", norm, phones, zh.word2ph)
