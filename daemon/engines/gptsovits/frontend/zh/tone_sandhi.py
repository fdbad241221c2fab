"""Mandarin tone sandhi on jieba words, mirroring upstream text/tone_sandhi.py.

Finals carry their tone as a trailing digit ("ao3"); a rule rewrites that digit.
The merge step runs on the whole jieba segmentation of a sentence before pinyin is
looked up, so that 不/一/reduplications/3-3 tone pairs are judged as one word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from daemon.engines.gptsovits.frontend._data import zh_rules

Word = tuple[str, str]  # (text, jieba POS tag)
_MutableWord = list[str]  # [text, tag] while words are being merged
CutForSearch = Callable[[str], Sequence[str]]
WordFinals = Callable[[str], list[str]]

NEUTRAL = "5"
_NEUTRAL_FINAL_CHARS = "吧呢哈啊呐噻嘛吖嗨呐哦哒额滴哩哟喽啰耶喔诶"
_STRUCTURAL_PARTICLES = "的地得"
_ASPECT_PARTICLES = "了着过"
_ASPECT_TAGS = {"ul", "uz", "ug"}
_LOCATIVE_CHARS = "上下里"
_LOCATIVE_TAGS = {"s", "l", "f"}
_DIRECTIONAL_PREFIX = "上下进出回过起开"
_GE_MEASURE_PREFIX = "几有两半多各整每做是"
# 一 keeps tone 1 before these (upstream ToneSandhi.punc).
_PUNCT_AFTER_YI = "：，；。？！“”‘’':,;.?!"


def _retone(final: str, tone: str) -> str:
    return final[:-1] + tone


def _all_third(finals: Sequence[str]) -> bool:
    return all(f[-1] == "3" for f in finals)


def _is_reduplication(word: str) -> bool:
    return len(word) == 2 and word[0] == word[1]


class ToneSandhi:
    def __init__(self, cut_for_search: CutForSearch, word_finals: WordFinals) -> None:
        rules = zh_rules()
        self._neutral_words = rules["must_neutral_tone_words"]
        self._not_neutral_words = rules["must_not_neutral_tone_words"]
        self._cut_for_search = cut_for_search
        self._word_finals = word_finals

    # ---------------------------------------------------------------- word merging
    def merge(self, words: Sequence[Word]) -> list[Word]:
        merged = self._merge_yi(self._merge_bu(words))
        merged = self._merge_reduplication(merged)
        for whole_words in (True, False):
            try:
                merged = self._merge_third_tones(merged, whole_words)
            except IndexError:
                # A syllable without a final (e.g. "hm") has no tone to test;
                # upstream then skips this merge step for the sentence.
                pass
        return [(w, t) for w, t in self._merge_er(merged)]

    @staticmethod
    def _merge_bu(words: Sequence[Word]) -> list[Word]:
        out: list[Word] = []
        last = ""
        for word, tag in words:
            if last == "不":
                word = last + word
            if word != "不":
                out.append((word, tag))
            last = word
        if last == "不":
            out.append((last, "d"))
        return out

    @staticmethod
    def _merge_yi(words: Sequence[Word]) -> list[_MutableWord]:
        # Pass 1: "V 一 V" (same verb both sides) becomes one word.
        out: list[list[str]] = []
        i = 0
        while i < len(words):
            word, tag = words[i]
            if i >= 1 and word == "一" and i + 1 < len(words):
                left = out[-1] if out else list(words[i - 1])
                right = words[i + 1]
                if left[0] == right[0] and left[1] == "v" and right[1] == "v":
                    out[-1] = [left[0] + "一" + right[0], left[1]]
                    i += 2
                    continue
            out.append([word, tag])
            i += 1
        # Pass 2: a lone 一 absorbs the following word.
        joined: list[list[str]] = []
        for word, tag in out:
            if joined and joined[-1][0] == "一":
                joined[-1][0] += word
            else:
                joined.append([word, tag])
        return joined

    @staticmethod
    def _merge_reduplication(words: Sequence[_MutableWord]) -> list[_MutableWord]:
        out: list[list[str]] = []
        for word, tag in words:
            if out and word == out[-1][0]:
                out[-1][0] += word
            else:
                out.append([word, tag])
        return out

    def _merge_third_tones(
        self, words: Sequence[_MutableWord], whole_words: bool
    ) -> list[_MutableWord]:
        finals = [self._word_finals(word) for word, _ in words]
        out: list[list[str]] = []
        merged_last = False
        for i, (word, tag) in enumerate(words):
            if i >= 1 and not merged_last:
                prev = words[i - 1][0]
                if whole_words:
                    third_pair = _all_third(finals[i - 1]) and _all_third(finals[i])
                else:
                    third_pair = (
                        finals[i - 1][-1][-1] == "3" and finals[i][0][-1] == "3"
                    )
                # Reduplications are left alone: they need the neutral-tone rule.
                if (
                    third_pair
                    and not _is_reduplication(prev)
                    and len(prev) + len(word) <= 3
                ):
                    out[-1][0] += word
                    merged_last = True
                    continue
            out.append([word, tag])
            merged_last = False
        return out

    @staticmethod
    def _merge_er(words: Sequence[_MutableWord]) -> list[_MutableWord]:
        out: list[list[str]] = []
        for i, (word, tag) in enumerate(words):
            if i >= 1 and word == "儿" and words[i - 1][0] != "#":
                out[-1][0] += word
            else:
                out.append([word, tag])
        return out

    # ---------------------------------------------------------------- tone rules
    def apply(self, word: str, tag: str, finals: list[str]) -> list[str]:
        finals = self._bu(word, finals)
        finals = self._yi(word, finals)
        finals = self._neutral(word, tag, finals)
        return self._third(word, finals)

    def _split(self, word: str) -> tuple[str, str]:
        """Two-way split at jieba's shortest search sub-word (upstream _split_word)."""
        shortest = sorted(self._cut_for_search(word), key=len)[0]
        if word.find(shortest) == 0:
            return shortest, word[len(shortest) :]
        return word[: -len(shortest)], shortest

    def _is_neutral_word(self, word: str) -> bool:
        return word in self._neutral_words or word[-2:] in self._neutral_words

    def _neutral(self, word: str, tag: str, finals: list[str]) -> list[str]:
        for j in range(1, len(word)):
            if (
                word[j] == word[j - 1]
                and tag[0] in "nva"
                and word not in self._not_neutral_words
            ):
                finals[j] = _retone(finals[j], NEUTRAL)
        ge = word.find("个")
        last = word[-1] if word else ""
        if last and last in _NEUTRAL_FINAL_CHARS + _STRUCTURAL_PARTICLES:
            finals[-1] = _retone(finals[-1], NEUTRAL)
        elif len(word) == 1 and word in _ASPECT_PARTICLES and tag in _ASPECT_TAGS:
            finals[-1] = _retone(finals[-1], NEUTRAL)
        elif (
            len(word) > 1
            and last in "们子"
            and tag in {"r", "n"}
            and word not in self._not_neutral_words
        ):
            finals[-1] = _retone(finals[-1], NEUTRAL)
        elif len(word) > 1 and last in _LOCATIVE_CHARS and tag in _LOCATIVE_TAGS:
            finals[-1] = _retone(finals[-1], NEUTRAL)
        elif len(word) > 1 and last in "来去" and word[-2] in _DIRECTIONAL_PREFIX:
            finals[-1] = _retone(finals[-1], NEUTRAL)
        elif (
            ge >= 1 and (word[ge - 1].isnumeric() or word[ge - 1] in _GE_MEASURE_PREFIX)
        ) or word == "个":
            finals[ge] = _retone(finals[ge], NEUTRAL)
        elif self._is_neutral_word(word):
            finals[-1] = _retone(finals[-1], NEUTRAL)
        first, second = self._split(word)
        halves = [finals[: len(first)], finals[len(first) :]]
        for half, part in zip(halves, (first, second), strict=True):
            if self._is_neutral_word(part):
                half[-1] = _retone(half[-1], NEUTRAL)
        return halves[0] + halves[1]

    @staticmethod
    def _bu(word: str, finals: list[str]) -> list[str]:
        if len(word) == 3 and word[1] == "不":
            finals[1] = _retone(finals[1], NEUTRAL)
            return finals
        for i, char in enumerate(word[:-1]):
            if char == "不" and finals[i + 1][-1] == "4":
                finals[i] = _retone(finals[i], "2")
        return finals

    @staticmethod
    def _yi(word: str, finals: list[str]) -> list[str]:
        if "一" in word and all(c.isnumeric() for c in word if c != "一"):
            return finals  # a digit sequence such as 一零零
        if len(word) == 3 and word[1] == "一" and word[0] == word[-1]:
            finals[1] = _retone(finals[1], NEUTRAL)  # 看一看
        elif word.startswith("第一"):
            finals[1] = _retone(finals[1], "1")
        else:
            for i, char in enumerate(word[:-1]):
                if char != "一":
                    continue
                if finals[i + 1][-1] == "4":
                    finals[i] = _retone(finals[i], "2")
                elif word[i + 1] not in _PUNCT_AFTER_YI:
                    finals[i] = _retone(finals[i], "4")
        return finals

    def _third(self, word: str, finals: list[str]) -> list[str]:
        if len(word) == 2 and _all_third(finals):
            finals[0] = _retone(finals[0], "2")
        elif len(word) == 3:
            first, _ = self._split(word)
            if _all_third(finals):
                if len(first) == 2:  # 蒙古/包
                    finals[0] = _retone(finals[0], "2")
                    finals[1] = _retone(finals[1], "2")
                elif len(first) == 1:  # 纸/老虎
                    finals[1] = _retone(finals[1], "2")
            else:
                halves = [finals[: len(first)], finals[len(first) :]]
                for i, half in enumerate(halves):
                    if _all_third(half) and len(half) == 2:  # 所有/人
                        half[0] = _retone(half[0], "2")
                    elif (
                        i == 1
                        and not _all_third(half)
                        and half[0][-1] == "3"
                        and halves[0][-1][-1] == "3"
                    ):  # 好/喜欢
                        halves[0][-1] = _retone(halves[0][-1], "2")
                finals = halves[0] + halves[1]
        elif len(word) == 4:
            halves = [finals[:2], finals[2:]]
            for half in halves:
                if _all_third(half):
                    half[0] = _retone(half[0], "2")
            finals = halves[0] + halves[1]
        return finals
