"""Sentence splitting and packing (the reference port's newer revision, docs/board.md).

Text is cut into natural units (sentences; clauses of over-long sentences; hard cuts
of clauses still too long), units are packed greedily into segments of at most
``max_len`` spoken characters, and short pieces are merged into a neighbour. Length
is counted after normalization: ideographs of the Chinese reading (so "2026年" is 5)
plus, for English words, their vowel groups (about one syllable each).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from daemon.engines.gptsovits.frontend.lang import has_han
from daemon.engines.gptsovits.frontend.zh.normalize import verbalized_sentences

# Reference-port limits: ≤ 30 spoken chars per segment, merge pieces under 5.
MAX_SEGMENT_LEN = 30
MIN_SEGMENT_LEN = 5
END_MARKS = "。！？!?…"
CLOSERS = "”」』’）)\"'"
CLAUSE_MARKS = "，,、；;：:"
# Punctuation a segment may end with; anything else gets "。" appended.
FINAL_PUNCT = "，。？！,.?!~…、；;：:" + CLOSERS
_SENTENCE_FINAL = "。"

SegmentEnd = Literal["sentence", "comma"]
Measure = Callable[[str], int]

_HAN = re.compile(r"[\u4e00-\u9fa5]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_VOWEL_GROUP = re.compile(r"[aeiouy]+", re.IGNORECASE)
_BREAK_AFTER_END = re.compile(rf"(?<=[{END_MARKS}{CLOSERS}])\s*\n+\s*")
_LINE_BREAK = re.compile(r"\s*\n+\s*")
_NON_DECIMAL_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")
_SENTENCES = re.compile(rf"([{END_MARKS}]+[{CLOSERS}]*)")
_CLAUSES = re.compile(rf"(?<=[{CLAUSE_MARKS}])")


@dataclass(frozen=True)
class Segment:
    """Text for one synthesis call and how it ends (for the pause after it)."""

    text: str
    end: SegmentEnd


def spoken_length(text: str) -> int:
    """Ideographs after Chinese normalization + syllable estimate of English words."""
    if not text.strip():
        return 0
    han = sum(len(_HAN.findall(s)) for s in verbalized_sentences(text))
    latin = sum(max(1, len(_VOWEL_GROUP.findall(w))) for w in _LATIN_WORD.findall(text))
    return han + latin


@dataclass
class _Unit:
    text: str
    length: int
    end: SegmentEnd


def _prepare(text: str) -> str:
    text = _BREAK_AFTER_END.sub("", text.strip())
    text = _LINE_BREAK.sub(_SENTENCE_FINAL, text)
    return _NON_DECIMAL_DOT.sub(_SENTENCE_FINAL, text)


def _sentences(text: str) -> list[str]:
    parts = _SENTENCES.split(text)
    return ["".join(parts[i : i + 2]).strip() for i in range(0, len(parts), 2)]


def _longest_fitting_prefix(text: str, max_len: int, measure: Measure) -> int:
    """Largest k with measure(text[:k]) <= max_len (at least 1 char)."""
    lo, hi = 1, min(len(text), 4 * max_len)
    while hi < len(text) and measure(text[:hi]) <= max_len:
        lo, hi = hi, min(len(text), 2 * hi)
    if measure(text[:hi]) <= max_len:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if measure(text[:mid]) <= max_len:
            lo = mid
        else:
            hi = mid
    return lo


def _units(sentence: str, length: int, max_len: int, measure: Measure) -> list[_Unit]:
    if length <= max_len:
        return [_Unit(sentence, length, "sentence")]
    units: list[_Unit] = []
    for clause in (c for c in _CLAUSES.split(sentence) if c):
        clause_len = measure(clause)
        while clause_len > max_len:
            k = _longest_fitting_prefix(clause, max_len, measure)
            head = clause[:k]
            units.append(_Unit(head, measure(head), "comma"))
            clause = clause[k:]
            clause_len = measure(clause)
        if clause_len == 0 and units:
            units[-1].text += clause  # trailing punctuation of a hard cut
        elif clause:
            units.append(_Unit(clause, clause_len, "comma"))
    units[-1].end = "sentence"
    return units


def _pack(units: Sequence[_Unit], max_len: int) -> list[_Unit]:
    packed: list[_Unit] = []
    for unit in units:
        if packed and packed[-1].length + unit.length <= max_len:
            last = packed[-1]
            packed[-1] = _Unit(
                last.text + unit.text, last.length + unit.length, unit.end
            )
        else:
            packed.append(_Unit(unit.text, unit.length, unit.end))
    return packed


def _merge_short(pieces: list[_Unit], min_len: int, max_len: int) -> list[_Unit]:
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        if piece.length < min_len and len(pieces) > 1:
            if i > 0 and pieces[i - 1].length + piece.length <= max_len:
                prev = pieces[i - 1]
                pieces[i - 1] = _Unit(
                    prev.text + piece.text, prev.length + piece.length, piece.end
                )
                del pieces[i]
                continue
            if i + 1 < len(pieces) and piece.length + pieces[i + 1].length <= max_len:
                nxt = pieces[i + 1]
                pieces[i] = _Unit(
                    piece.text + nxt.text, piece.length + nxt.length, nxt.end
                )
                del pieces[i + 1]
                continue
        i += 1
    return pieces


def _finish(text: str) -> str:
    return text if text[-1] in FINAL_PUNCT else text + _SENTENCE_FINAL


def split_text(
    text: str,
    max_len: int = MAX_SEGMENT_LEN,
    min_len: int = MIN_SEGMENT_LEN,
    measure: Measure = spoken_length,
) -> list[Segment]:
    """Segments of at most ``max_len`` spoken chars, in order, nothing dropped.

    Raises ValueError for empty or whitespace-only text; text with nothing to speak
    (punctuation, emoji) gives an empty list.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if not text.strip():
        raise ValueError("text is empty: nothing to synthesize")
    units: list[_Unit] = []
    for sentence in _sentences(_prepare(text)):
        if not sentence:
            continue
        length = measure(sentence)
        if length == 0:
            if units:  # punctuation-only: stays with the sentence before it
                units[-1].text += sentence
            continue
        units.extend(_units(sentence, length, max_len, measure))
    pieces = _merge_short(_pack(units, max_len), min_len, max_len)
    return [Segment(_finish(p.text), p.end) for p in pieces]


def _cut_points(text: str, marks: str) -> list[int]:
    return [m.end() for m in re.finditer(rf"[{marks}]+[{CLOSERS}]*", text)]


def split_in_half(
    segment: Segment,
    cut_words: Callable[[str], Sequence[str]],
    measure: Measure = spoken_length,
) -> tuple[Segment, Segment]:
    """Re-split a segment at its most natural point nearest the middle.

    Sentence ends are preferred, then clause marks, then a word boundary (from
    ``cut_words``, e.g. jieba), where "，" is added to the first half. Raises
    ValueError if the segment has fewer than two spoken chars.
    """
    text = segment.text
    total = measure(text)
    if total < 2:
        raise ValueError(f"segment too short to split: {text!r}")

    def best(points: Sequence[int]) -> int | None:
        inner = [p for p in points if 0 < p < len(text)]
        scored = [(abs(2 * measure(text[:p]) - total), p) for p in inner]
        scored = [(s, p) for s, p in scored if 0 < measure(text[:p]) < total]
        return min(scored)[1] if scored else None

    for marks, end in ((END_MARKS, "sentence"), (CLAUSE_MARKS, "comma")):
        at = best(_cut_points(text, marks))
        if at is not None:
            head = Segment(text[:at], end)  # type: ignore[arg-type]
            return head, Segment(_finish(text[at:].lstrip()), segment.end)
    words = list(cut_words(text))
    if "".join(words) != text:
        raise ValueError("cut_words must return pieces that cover the text exactly")
    bounds, pos = [], 0
    for word in words:
        pos += len(word)
        bounds.append(pos)
    at = best(bounds)
    if at is None:
        raise ValueError(f"no place to split segment: {text!r}")
    comma = "，" if has_han(text) else ","
    head = Segment(text[:at].rstrip() + comma, "comma")
    return head, Segment(_finish(text[at:].lstrip()), segment.end)
