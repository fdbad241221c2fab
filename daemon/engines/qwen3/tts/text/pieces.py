"""Text cut into pieces the talker's graphs hold, at sentence ends first.

Upstream speaks a whole text as one utterance; so does the engine while the
text fits (its prompt in the largest prefill bucket, its frames in the largest
KV bucket; the engine's ``fits`` says).  A longer text is cut at the sentence
ends of the shared splitter (daemon/text/sentences.py) and neighbouring
sentences are packed back together while they fit; a sentence that alone does
not fit is re-split at clause marks, then at spaces, then inside a word.
Pieces are slices of the original text (no separator is invented), so CJK text
stays unspaced.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from daemon.text.sentences import split_sentences

#: where a sentence that does not fit is cut next, strongest first
BREAKS: Final = (
    re.compile(r"(?<=[,;:，；：、])"),  # clause marks, the mark kept left
    re.compile(r"(?<=\s)(?=\S)"),  # between words
)

Fits = Callable[[str], bool]


def pieces(text: str, fits: Fits) -> list[str]:
    """``text`` (stripped) as one piece if it fits, else as packed pieces that
    each fit; [] for blank text."""
    text = text.strip()
    if not text:
        return []
    if fits(text):
        return [text]
    units = [u for sentence in _sentences(text) for u in _cut(sentence, fits)]
    return _pack(units, fits)


def _sentences(text: str) -> list[str]:
    """The splitter's sentences as slices of ``text``: the gap after one
    belongs to it, so they rejoin to the text."""
    parts = split_sentences(text)
    starts, pos = [], 0
    for part in parts:
        found = text.find(part, pos)
        if found < 0:  # the splitter rewrote the text: its sentences, spaced
            return [part + " " for part in parts]
        starts.append(found)
        pos = found + len(part)
    if not starts:
        return [text]
    starts[0] = 0
    ends = [*starts[1:], len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


def _cut(unit: str, fits: Fits) -> list[str]:
    """``unit`` as one or more slices that each fit."""
    if fits(unit.strip()):
        return [unit]
    for brk in BREAKS:
        bounds = [0, *(m.start() for m in brk.finditer(unit)), len(unit)]
        parts = [unit[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
        if len(parts) > 1:
            return [p for part in parts for p in _cut(part, fits)]
    return _chars(unit, fits)


def _chars(unit: str, fits: Fits) -> list[str]:
    """The longest prefix that fits (at least one character), repeatedly."""
    out = []
    while unit:
        lo, hi = 1, len(unit)
        while lo < hi:  # the largest n with fits(unit[:n]), fits(1) assumed
            mid = (lo + hi + 1) // 2
            if fits(unit[:mid].strip() or unit[:mid]):
                lo = mid
            else:
                hi = mid - 1
        out.append(unit[:lo])
        unit = unit[lo:]
    return out


def _pack(units: list[str], fits: Fits) -> list[str]:
    """Neighbouring units joined while the join fits; stripped, none blank."""
    out: list[str] = []
    current = ""
    for unit in units:
        joined = current + unit
        if current and not fits(joined.strip()):
            out.append(current)
            current = unit
        else:
            current = joined
    if current:
        out.append(current)
    return [p.strip() for p in out if p.strip()]
