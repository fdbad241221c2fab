"""Text -> phoneme-id pieces for a Piper voice, with piper's own phonemizer.

The text is cut into sentences by `daemon.text.sentences` (the rule a Wyoming stream
is cut by, so both give the same pieces and pauses); espeak-ng (through
piper-tts's `espeakbridge`) may split a sentence further, at abbreviations and
initials ("Mr.", "J. R."), and turns each part into IPA; such a split gets no
pause. Each sentence is followed by the voice's `sentence_silence` (piper's
default: none). piper maps each phoneme to ids with a pad after every
phoneme, BOS first and EOS last (piper/phoneme_ids.py). Graphs of any length
(the CPU backend) take every sentence whole, as piper does; only static encoder
buckets (the NPU) make a sentence whose ids do not fit the largest one be cut
into pieces at the most natural places: after a clause mark (, : ;) if one is
near the middle, else at a word boundary, never inside a word unless a single
word is too long.
"""

from __future__ import annotations

import logging
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Any, Final

from daemon.engines.piper.params import PiperParams
from daemon.engines.piper.schema import BOS, EOS, PAD
from daemon.sdk.audio.shaping import COMMA_PAUSE_S
from daemon.text.sentences import split_sentences
from daemon.text.writing_systems import LATIN, Coverage

_LOGGER = logging.getLogger(__name__)

# espeak-ng clause marks after which piper appends a space (phonemize_espeak.py):
# the natural places to cut a long sentence.
CLAUSE_MARKS: Final = frozenset(",:;")
WORD_BREAK: Final = " "
# A clause cut is preferred if it lies within this fraction of the ideal piece
# length from the ideal cut point; otherwise the nearest word boundary wins.
CLAUSE_SLACK: Final = 0.25
#: After a part espeak-ng split off inside one sentence ("Mr."): no silence.
NO_PAUSE_S: Final = 0.0


@dataclass(frozen=True)
class Piece:
    """One encoder call: phoneme ids and the pause that follows its audio."""

    ids: tuple[int, ...]
    phonemes: str
    pause_s: float
    #: the last piece of an espeak-ng sentence: piper normalizes per such sentence
    ends_sentence: bool = True
    #: a part of a sentence cut for the encoder buckets (its edges are faded)
    cut: bool = False


def coverage(params: PiperParams) -> Coverage | None:
    """What the voice reads: its id map's letters, or its espeak-ng language."""
    if params.phoneme_type == "text":
        return Coverage.of_letters((params.espeak_voice,), params.phoneme_id_map)
    # espeak-ng reads Latin-script words by its English rules in every language
    # ("Hello" on ru and cmn: həlˈəʊ), so Latin is always readable.
    return Coverage.of_languages((params.espeak_voice,), also=(LATIN,))


class PiperText:
    """Phonemizes and cuts text into pieces of at most `max_ids` ids each
    (None: graphs of any length, no sentence is cut)."""

    def __init__(self, params: PiperParams, max_ids: int | None) -> None:
        self.params = params
        self.max_ids = max_ids
        # ids of BOS, PAD, EOS around the phonemes: the fixed cost of a piece.
        self._frame = len(self._ids([]))
        if max_ids is not None and self._frame >= max_ids:
            raise ValueError(f"bucket of {max_ids} ids cannot hold BOS/EOS")
        self._espeak: Any = None
        self._missing: set[str] = set()
        self.coverage = coverage(params)

    def load(self) -> None:
        """Initialise espeak-ng now (it is otherwise loaded on first use)."""
        if self.params.phoneme_type == "espeak" and self._espeak is None:
            # Lazy: piper's package __init__ imports onnxruntime (piper/voice.py),
            # so this costs ~0.2 s and must not happen when the daemon imports us.
            from piper.phonemize_espeak import EspeakPhonemizer

            self._espeak = EspeakPhonemizer()

    def sentences(self, text: str) -> list[list[str]]:
        """Phonemes of each sentence, as piper's PiperVoice.phonemize gives them."""
        if self.params.phoneme_type == "text":
            return [list(unicodedata.normalize("NFD", text))]
        self.load()
        clusters = set(self.params.vowel_clusters) or None
        # espeakbridge is process-global C state (voice, buffers): callers keep
        # one phonemize at a time, which the daemon's single worker does.
        found = self._espeak.phonemize(self.params.espeak_voice, text, clusters)
        return [s for s in found if s]

    def pieces(self, text: str) -> list[Piece]:
        """Every piece to synthesize, in order; a clear error for empty text."""
        if not text or not text.strip():
            raise ValueError("nothing to say: the text is empty")
        if self.coverage is not None:  # no "Chinese letter" for 你 on English
            text = self.coverage.speakable(text)
        out: list[Piece] = []
        for sentence in split_sentences(text):
            for phonemes in self.sentences(sentence):
                parts = self.split(phonemes)
                for i, part in enumerate(parts):
                    last = i == len(parts) - 1
                    pause = NO_PAUSE_S if last else COMMA_PAUSE_S
                    ids = tuple(self._ids(part))
                    cut = len(parts) > 1
                    out.append(Piece(ids, "".join(part), pause, last, cut))
            if out:  # the sentence's last piece
                out[-1] = replace(out[-1], pause_s=self.params.sentence_silence)
        if not out:
            raise ValueError(f"nothing to say: no phonemes in {text[:40]!r}")
        return out

    def split(self, phonemes: Sequence[str]) -> list[list[str]]:
        """Cut one sentence so that each part's ids fit `max_ids`."""
        phonemes = list(phonemes)
        if self.max_ids is None:
            return [phonemes] if phonemes else []
        cost = [self._cost(p) for p in phonemes]
        budget = self.max_ids - self._frame
        parts: list[list[str]] = []
        while sum(cost) > budget:
            cut = self._cut(phonemes, cost, budget)
            parts.append(phonemes[:cut])
            phonemes, cost = phonemes[cut:], cost[cut:]
            while phonemes and phonemes[0] == WORD_BREAK:  # no leading space
                phonemes, cost = phonemes[1:], cost[1:]
        parts.append(phonemes)
        return [p for p in parts if p]

    def _cut(self, phonemes: list[str], cost: list[int], budget: int) -> int:
        """Index to cut before: balanced pieces, clause marks, then words."""
        spent_before = list(accumulate(cost))  # ids of phonemes[:i + 1]
        fits = bisect_right(spent_before, budget)  # longest prefix that fits
        pieces = -(-spent_before[-1] // budget)
        ideal = spent_before[-1] / pieces
        # Cut candidates end right after a word break (the break stays in front).
        clause: list[tuple[float, int]] = []
        word: list[tuple[float, int]] = []
        for i in range(1, fits + 1):
            spent = spent_before[i - 1]
            if phonemes[i - 1] == WORD_BREAK:
                word.append((abs(spent - ideal), i))
                if i >= 2 and phonemes[i - 2] in CLAUSE_MARKS:
                    clause.append((abs(spent - ideal), i))
        near = [c for c in clause if c[0] <= CLAUSE_SLACK * ideal]
        for choice in (near, word):
            if choice:
                return min(choice)[1]
        return max(fits, 1)  # one word longer than a bucket: cut inside it

    def _cost(self, phoneme: str) -> int:
        ids = self.params.phoneme_id_map.get(phoneme)
        return 0 if ids is None else len(ids) + len(self.params.phoneme_id_map[PAD])

    def _ids(self, phonemes: Sequence[str]) -> list[int]:
        """piper's phonemes_to_ids: BOS PAD (p PAD)* EOS; unknown phonemes skipped."""
        id_map = self.params.phoneme_id_map
        ids = [*id_map[BOS], *id_map[PAD]]
        for phoneme in phonemes:
            if phoneme not in id_map:
                if phoneme not in self._missing:
                    self._missing.add(phoneme)
                    _LOGGER.warning("phoneme %r is not in the voice's id map", phoneme)
                continue
            ids.extend(id_map[phoneme])
            ids.extend(id_map[PAD])
        ids.extend(id_map[EOS])
        return ids
