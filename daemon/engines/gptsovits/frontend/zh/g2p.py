"""Chinese G2P onto the v2 symbol table (upstream chinese2.g2p with g2pW).

Every ideograph becomes two phones (initial, final+tone) and every punctuation mark
one phone; ``word2ph`` holds those counts per char so BERT rows can be repeated.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pypinyin import Style, lazy_pinyin
from pypinyin.contrib.tone_convert import to_finals_tone3, to_initials

from daemon.engines.gptsovits.frontend._data import opencpop_strict, zh_rules
from daemon.engines.gptsovits.frontend.symbols import PUNCTUATION, UNK
from daemon.engines.gptsovits.frontend.zh.polyphone import (
    PolyphoneResolver,
    correct_pronunciation,
    pypinyin_readings,
)
from daemon.engines.gptsovits.frontend.zh.tone_sandhi import ToneSandhi

if TYPE_CHECKING:
    from daemon.sdk.cancel import CancelToken

log = logging.getLogger(__name__)

_SENTENCE_END = re.compile(rf"(?<=[{''.join(re.escape(p) for p in PUNCTUATION)}])\s*")
_LATIN = re.compile("[a-zA-Z]+")
_ERHUA_EXEMPT_TAGS = {"a", "j", "nr"}
_TONES = "12345"
# pypinyin strict finals -> the spelling the opencpop table uses after an initial.
_FINAL_AFTER_INITIAL = {"uei": "ui", "iou": "iu", "uen": "un"}
# Zero-initial syllables (pypinyin strict gives no initial for y/w).
_ZERO_INITIAL_WHOLE = {"ing": "ying", "i": "yi", "in": "yin", "u": "wu"}
_ZERO_INITIAL_LEAD = {"v": "yu", "e": "e", "i": "y", "u": "w"}


@dataclass(frozen=True)
class ZhPhones:
    phones: tuple[str, ...]
    word2ph: tuple[int, ...]


def _word_finals(word: str) -> list[str]:
    return lazy_pinyin(word, neutral_tone_with_five=True, style=Style.FINALS_TONE3)


def _split_syllable(reading: str) -> tuple[str, str]:
    if reading[:1].isalpha():
        return to_initials(reading), to_finals_tone3(
            reading, neutral_tone_with_five=True
        )
    return reading, reading  # punctuation stands for itself


def _merge_erhua(
    initials: list[str], finals: list[str], word: str, tag: str
) -> tuple[list[str], list[str]]:
    rules = zh_rules()
    last = len(finals) - 1
    if finals and word[last] == "儿" and finals[last] == "er1":
        finals[last] = "er2"
    if word not in rules["must_erhua"] and (
        word in rules["not_erhua"] or tag in _ERHUA_EXEMPT_TAGS
    ):
        return initials, finals
    if len(finals) != len(word):
        return initials, finals
    if (
        last >= 1
        and word[last] == "儿"
        and finals[last] in {"er2", "er5"}
        and word[-2:] not in rules["not_erhua"]
    ):
        # The 儿 syllable takes the tone of the syllable it attaches to.
        finals[last] = "er" + finals[last - 1][-1]
    return initials, finals


def _syllable_phones(initial: str, final: str) -> list[str]:
    if initial == final:
        return [initial] if initial in PUNCTUATION else [UNK]
    tone = final[-1:]
    bare = final[:-1]
    if tone not in _TONES:
        return [UNK]
    if initial:
        spelled = initial + _FINAL_AFTER_INITIAL.get(bare, bare)
    elif bare in _ZERO_INITIAL_WHOLE:
        spelled = _ZERO_INITIAL_WHOLE[bare]
    elif bare[:1] in _ZERO_INITIAL_LEAD:
        spelled = _ZERO_INITIAL_LEAD[bare[0]] + bare[1:]
    else:
        spelled = bare
    pair = opencpop_strict().get(spelled)
    if pair is None:
        log.warning("no phones for pinyin %r (%s%s)", spelled, initial, final)
        return [UNK, UNK]
    return [pair[0], pair[1] + tone]


class ChineseG2P:
    """Normalized Chinese text -> phones + word2ph. Holds its own jieba instance."""

    def __init__(self, resolver: PolyphoneResolver | None = None) -> None:
        import jieba_fast
        import jieba_fast.posseg

        jieba_fast.setLogLevel(logging.CRITICAL)
        self._jieba = jieba_fast.Tokenizer()
        self._posseg = jieba_fast.posseg.POSTokenizer(self._jieba)
        self._sandhi = ToneSandhi(self._cut_for_search, _word_finals)
        self._resolver = resolver
        self._warned_no_resolver = False

    def _cut_for_search(self, word: str) -> list[str]:
        return list(self._jieba.cut_for_search(word))

    def warm_up(self) -> None:
        """Load jieba's dictionaries and the rule tables now rather than mid-request."""
        self("你好,一起去银行看看吧.")

    def cut(self, sentence: str) -> list[str]:
        """Plain jieba word segmentation (used to re-split long segments)."""
        return list(self._jieba.cut(sentence))

    def _readings(
        self, sentences: Sequence[str], cancel: CancelToken | None
    ) -> list[list[str]]:
        base = [pypinyin_readings(s) for s in sentences]
        if self._resolver is None:
            if not self._warned_no_resolver:
                log.info("polyphones: no g2pW resolver, using pypinyin's readings")
                self._warned_no_resolver = True
            return base
        picked = self._resolver.resolve(list(sentences), cancel)
        if len(picked) != len(sentences):
            raise RuntimeError(
                "polyphone resolver returned a wrong number of sentences"
            )
        out = []
        for sentence, fallback, choice in zip(sentences, base, picked, strict=True):
            if len(choice) != len(sentence):
                raise RuntimeError(f"polyphone resolver misaligned on {sentence!r}")
            out.append([c if c else f for c, f in zip(choice, fallback, strict=True)])
        return out

    def __call__(self, norm_text: str, cancel: CancelToken | None = None) -> ZhPhones:
        sentences = [s for s in _SENTENCE_END.split(norm_text) if s.strip()]
        sentences = [_LATIN.sub("", s) for s in sentences]
        readings = iter(self._readings([s for s in sentences if s], cancel))
        phones: list[str] = []
        word2ph: list[int] = []
        for sentence in sentences:
            if not sentence:
                continue
            initials, finals = self._sentence_syllables(sentence, next(readings))
            for initial, final in zip(initials, finals, strict=True):
                syllable = _syllable_phones(initial, final)
                phones.extend(syllable)
                word2ph.append(len(syllable))
        return ZhPhones(tuple(phones), tuple(word2ph))

    def _sentence_syllables(
        self, sentence: str, readings: list[str]
    ) -> tuple[list[str], list[str]]:
        words = [(w, t) for w, t in self._posseg.lcut(sentence)]
        words = self._sandhi.merge(words)
        initials: list[str] = []
        finals: list[str] = []
        start = 0
        for word, tag in words:
            end = start + len(word)
            if tag == "eng":
                start = end
                continue
            word_readings = correct_pronunciation(word, readings[start:end])
            start = end
            pairs = [_split_syllable(r) for r in word_readings]
            word_initials = [p[0] for p in pairs]
            word_finals = self._sandhi.apply(word, tag, [p[1] for p in pairs])
            word_initials, word_finals = _merge_erhua(
                word_initials, word_finals, word, tag
            )
            initials.extend(word_initials)
            finals.extend(word_finals)
        return initials, finals
