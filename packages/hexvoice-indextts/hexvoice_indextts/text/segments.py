"""Pieces cut into the segments the GPT speaks one at a time, as upstream's
``TextTokenizer.split_segments`` cuts them (indextts/utils/front.py): at
sentence ends, else at commas, else at hyphens, else every ``limit`` pieces;
then neighbours are merged while they fit.

Reproduced with its quirks, since they decide what the GPT is fed:
- a sentence end followed by an apostrophe keeps the apostrophe in both
  segments (upstream appends it and advances a for-loop index, which Python
  ignores);
- a comma or hyphen cuts the text at once into its own recursive pass, whose
  pieces are merged again at the end;
- merging is greedy: into the previous segment when both fit in ``limit``
  (once more than ``quick_tokens`` pieces were seen), or both fit in half of it.
"""

from __future__ import annotations

import logging
from typing import Final

log = logging.getLogger(__name__)

#: TextTokenizer.punctuation_marks_tokens (upstream leaves "▁!" out: not in
#: its BPE)
SENTENCE_ENDS: Final = (".", "!", "?", "▁.", "▁?", "▁...")
COMMAS: Final = (",", "▁,")
HYPHENS: Final = ("-",)
APOSTROPHES: Final = ("'", "▁'")
#: infer_v2.infer's max_text_tokens_per_segment
MAX_SEGMENT_PIECES: Final = 120


def split_segments(
    pieces: list[str], limit: int = MAX_SEGMENT_PIECES, quick_tokens: int = 0
) -> list[list[str]]:
    return _split(pieces, SENTENCE_ENDS, limit, quick_tokens)


def _split(
    pieces: list[str], ends: tuple[str, ...], limit: int, quick: int
) -> list[list[str]]:
    if not pieces:
        return []
    segments: list[list[str]] = []
    current: list[str] = []
    count = 0  # pieces in `current`, the carried apostrophe not counted
    for i, piece in enumerate(pieces):
        current.append(piece)
        count += 1
        if not any(c in ends for c in COMMAS) and any(c in current for c in COMMAS):
            cut = _split(current, COMMAS, limit, quick)
        elif "-" not in ends and "-" in current:
            cut = _split(current, HYPHENS, limit, quick)
        elif count <= limit:
            if piece in ends and count > 2:
                if i < len(pieces) - 1 and pieces[i + 1] in APOSTROPHES:
                    current.append(pieces[i + 1])
                segments.append(current)
                current, count = [], 0
            continue
        else:
            cut = [current[j : j + limit] for j in range(0, len(current), limit)]
            log.warning("a segment of %d pieces cut every %d", len(current), limit)
        segments.extend(cut)
        current, count = [], 0
    if count > 0:
        segments.append(current)
    return _merge(segments, limit, quick)


def _merge(segments: list[list[str]], limit: int, quick: int) -> list[list[str]]:
    merged: list[list[str]] = []
    seen = 0
    for segment in segments:
        seen += len(segment)
        if not segment:
            continue
        if merged and (
            (len(merged[-1]) + len(segment) <= limit and seen > quick)
            or len(merged[-1]) + len(segment) <= limit / 2
        ):
            merged[-1] = merged[-1] + segment
        else:
            merged.append(segment)
    return merged
