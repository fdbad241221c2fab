"""Which writing systems a voice can read, and the check of request text against it.

Given letters of a script its frontend does not read, a voice still makes sound,
but no words: espeak-ng on an English voice says "Chinese letter" for every
ideograph, "gamma epsilon ..." for Greek. Each engine declares what it reads as a
:class:`Coverage`; :meth:`Coverage.speakable` then refuses text with nothing the
voice can read (a ``ValueError``: HTTP 400, a Wyoming ``error``, ``say`` exit 1)
and drops, with one warning naming the voice's languages, the runs it cannot.

A letter's script is the first word of its Unicode name ("CYRILLIC SMALL LETTER
PE", "CJK UNIFIED IDEOGRAPH-4F60") after NFKC folds full-width and compatibility
forms; digits, punctuation, symbols and emoji belong to no script and are left to
the engine (every frontend reads digits in its own language).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

_LOGGER = logging.getLogger(__name__)

LATIN: Final = "Latin"
HAN: Final = "Han"
#: Languages written in one script, by script: ISO 639 codes (the part of a
#: BCP 47 / espeak-ng voice name before "-" or "_"), the languages of Piper's
#: voice list and GPT-SoVITS.
_WRITTEN_IN: Final = {
    LATIN: "af ca cs cy da de en eo es et eu fi fr ga gl hr hu id is it lb lt lv "
    "ms mt nb nl nn no pl pt ro sk sl sq sv sw tr vi",
    "Cyrillic": "be bg kk ky mk mn ru tg uk",
    "Arabic": "ar fa ps ur",
    "Devanagari": "hi mr ne",
    HAN: "zh cmn yue",
    "Hangul": "ko",
    "Greek": "el",
    "Hebrew": "he",
    "Georgian": "ka",
    "Armenian": "hy",
    "Bengali": "bn",
    "Gujarati": "gu",
    "Gurmukhi": "pa",
    "Tamil": "ta",
    "Telugu": "te",
    "Kannada": "kn",
    "Malayalam": "ml",
    "Thai": "th",
}
#: Scripts by ISO 639 language code: those above, and the languages written in
#: more than one.
LANGUAGE_SCRIPTS: Final[dict[str, frozenset[str]]] = {
    **{
        code: frozenset({script})
        for script, codes in _WRITTEN_IN.items()
        for code in codes.split()
    },
    "sr": frozenset({"Cyrillic", LATIN}),
    "ja": frozenset({HAN, "Hiragana", "Katakana"}),
}
#: First words of letter names that are not a script's name.
_NAME_SCRIPT: Final = {"CJK": HAN, "IDEOGRAPHIC": HAN}
_NO_SCRIPT: Final = frozenset({"MODIFIER", "FEMININE", "MASCULINE", "COMBINING"})
#: How much of the dropped text a warning quotes.
QUOTE_CHARS: Final = 40


def script_of(char: str) -> str | None:
    """The script of a letter ("Latin", "Han", "Cyrillic"...); None otherwise."""
    folded = unicodedata.normalize("NFKC", char)[:1] or char
    if not unicodedata.category(folded).startswith("L"):
        return None
    name = unicodedata.name(folded, "")
    first = name.replace("-", " ").split(" ", 1)[0]
    if not first or first in _NO_SCRIPT:
        return None
    return _NAME_SCRIPT.get(first, first.title())


def language_scripts(language: str) -> frozenset[str] | None:
    """Scripts of a language tag ("en_US", "en-us", "cmn"); None if unknown."""
    code = language.replace("_", "-").split("-", 1)[0].lower()
    return LANGUAGE_SCRIPTS.get(code)


class UnspeakableText(ValueError):
    """The text has letters, and none of them in a script the voice reads."""


@dataclass(frozen=True)
class Coverage:
    """What a voice reads: its languages (for messages), their scripts, and
    single characters of other scripts it reads all the same (α as 阿尔法)."""

    languages: tuple[str, ...]
    scripts: frozenset[str]
    chars: frozenset[str] = frozenset()

    @classmethod
    def of_languages(
        cls, languages: Iterable[str], also: Iterable[str] = ()
    ) -> Coverage | None:
        """Coverage of these languages plus scripts ``also``; None if one is
        unknown (then nothing is checked rather than something refused wrongly)."""
        languages = tuple(languages)
        found = [language_scripts(lang) for lang in languages]
        if not languages or any(s is None for s in found):
            return None
        scripts = frozenset().union(*(s for s in found if s is not None))
        return cls(languages, scripts | frozenset(also))

    @classmethod
    def of_letters(cls, languages: Iterable[str], letters: Iterable[str]) -> Coverage:
        """Coverage of a voice that reads exactly these characters."""
        scripts = {s for c in letters for s in [script_of(c)] if s is not None}
        return cls(tuple(languages), frozenset(scripts))

    def describe(self) -> str:
        return f"{', '.join(self.languages)} ({', '.join(sorted(self.scripts))} script)"

    def speakable(self, text: str) -> str:
        """``text`` without the letters this voice cannot read (each dropped run
        becomes a space, with one warning); UnspeakableText if nothing is left."""
        kept: list[str] = []
        dropped: list[str] = []  # runs of letters (and their marks) not read
        in_run = False
        for char in text:
            script = script_of(char)
            mark = unicodedata.category(char).startswith("M")
            if (
                (script is None and not (mark and in_run))
                or script in self.scripts
                or char in self.chars
            ):
                kept.append(char)
                in_run = False
                continue
            if not in_run:
                kept.append(" ")
                dropped.append("")
            in_run = True
            dropped[-1] += char
        if not dropped:
            return text
        rest = "".join(kept)
        scripts = sorted({s for run in dropped for c in run if (s := script_of(c))})
        what = f"{'/'.join(scripts)} text {' '.join(dropped)[:QUOTE_CHARS]!r}"
        if not any(unicodedata.category(c)[0] in "LN" for c in rest):
            raise UnspeakableText(
                f"this voice cannot read {what}: it speaks {self.describe()}"
            )
        _LOGGER.warning("skipped %s: this voice speaks %s", what, self.describe())
        return rest
