"""Text normalisation as upstream's ``TextNormalizer`` (indextts/utils/front.py)
does it: NeMo's text-normalisation grammars (``nemo_text_processing``, cased,
deterministic) wrapped in upstream's own rules, which this module reproduces:

- the language: ``zh`` when the text has a CJK ideograph, no Latin letter, is
  an e-mail address or has tone-numbered pinyin, else ``en`` (or the one the
  config fixes: ``en``, ``zh`` or ``es``);
- before NeMo: ``what's``-style contractions become ``... is``, the glossary's
  readings replace its terms, and hyphenated technical terms (``GPT-5``),
  pinyin with tone numbers and ``·``-joined CJK names are swapped for
  placeholders NeMo leaves alone, then put back;
- after NeMo: upstream's punctuation map (full-width and bracket marks to
  ASCII, ``...`` to ``…``; for zh also ``$`` to ``.``);
- when NeMo raises, en keeps the text as given and zh gives ``""``, as upstream.

NeMo compiles its grammars into FST archives on first use (minutes for zh);
``cache_dir`` keeps them, and the build writes them into the bundle.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, Literal

log = logging.getLogger(__name__)

Language = Literal["en", "zh", "es"]
#: None: per text, as upstream's default ``language=None``.
LANGUAGES: Final = ("en", "zh", "es")

#: Upstream's punctuation map, in its order (the alternation tries the keys in
#: this order, so "..." wins over "." and ",,," over ",").
CHAR_MAP: Final = {
    "：": ",", "；": ",", ";": ",", "，": ",", "。": ".", "！": "!", "？": "?",
    "\n": " ", "·": "-", "、": ",", "...": "…", ",,,": "…", "，，，": "…",
    "……": "…", "“": "'", "”": "'", '"': "'", "‘": "'", "’": "'", "（": "'",
    "）": "'", "(": "'", ")": "'", "《": "'", "》": "'", "【": "'", "】": "'",
    "[": "'", "]": "'", "—": "-", "～": "-", "~": "-", "「": "'", "」": "'",
    ":": ",",
}  # fmt: skip
ZH_CHAR_MAP: Final = {"$": ".", **CHAR_MAP}

CJK_IDEOGRAPH: Final = re.compile(r"[\u4e00-\u9fff]")
LATIN: Final = re.compile(r"[a-zA-Z]")
EMAIL: Final = re.compile(r"^[a-zA-Z0-9]+@[a-zA-Z0-9]+\.[a-zA-Z]+$")
#: pinyin syllable + tone 1-5 (5: neutral), not after a Latin letter: xuan4,
#: jve2; not beta1.
PINYIN_TONE: Final = re.compile(
    r"(?<![a-z])((?:[bpmfdtnlgkhjqxzcsryw]|[zcs]h)?(?:[aeiouüv]|[ae]i|u[aio]|ao|ou"
    r"|i[aue]|[uüv]e|[uvü]ang?|uai|[aeiuv]n|[aeio]ng|ia[no]|i[ao]ng)|ng|er)([1-5])",
    re.IGNORECASE,
)
#: CJK names joined by ·, - or —: 克里斯托弗·诺兰
NAME: Final = re.compile(r"[\u4e00-\u9fff]+(?:[-·—][\u4e00-\u9fff]+){1,2}", re.I)
#: letter-led hyphenated terms (GPT-5-nano), whose hyphens zh NeMo would read
#: as minus signs; digits alone (phone numbers) are not terms.
TECH_TERM: Final = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+")
HYPHEN_HOLD: Final = "<H>"
CONTRACTION: Final = re.compile(
    r"(what|where|who|which|how|t?here|it|s?he|that|this)'s", re.IGNORECASE
)
#: jqx + u/ü is written v in upstream's pinyin (ju4 -> JV4)
JQX_U: Final = re.compile(r"([jqx])[uü](n|e|an)*(\d)", re.IGNORECASE)

#: A glossary: term -> reading, or term -> {language: reading}.
Glossary = Mapping[str, "str | Mapping[str, str]"]
#: Upstream reads its glossary from the model directory, when there.
GLOSSARY_FILE: Final = "glossary.yaml"


def read_glossary(path: Path) -> dict[str, str | dict[str, str]]:
    """``glossary.yaml`` (term: reading, or term: {en: ..., zh: ...}), read
    with hexvoice's typed reader; an empty file is an empty glossary."""
    import yaml
    from daemon.config.reader import read

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    return read(data, dict[str, str | dict[str, str]], where=str(path))


def _replacer(table: Mapping[str, str]) -> Callable[[str], str]:
    pattern = re.compile("|".join(re.escape(k) for k in table))
    return lambda s: pattern.sub(lambda m: table[m.group()], s)


_MAP_EN, _MAP_ZH = _replacer(CHAR_MAP), _replacer(ZH_CHAR_MAP)


def is_chinese(text: str) -> bool:
    """Upstream's choice of the zh grammar for ``text``."""
    if CJK_IDEOGRAPH.search(text) or not LATIN.search(text) or EMAIL.match(text):
        return True
    return PINYIN_TONE.search(text) is not None


class Normalizer:
    """``normalize(text)`` as upstream's TextNormalizer with
    ``enable_glossary=True`` and ``preferred_language=language``."""

    def __init__(
        self,
        cache_dir: Path,
        language: Language | None = None,
        glossary: Glossary | None = None,
    ) -> None:
        self.language, self.glossary = language, dict(glossary or {})
        self._cache_dir = Path(cache_dir)
        self._nemo: dict[str, object] = {}

    def load(self) -> None:
        """Compile or read the grammars this normaliser may use."""
        for lang in [self.language] if self.language else ["zh", "en"]:
            self._grammar(lang)

    def normalize(self, text: str) -> str:
        lang = self.language or ("zh" if is_chinese(text) else "en")
        if lang == "es":
            return self._spanish(text)
        if lang == "zh":
            return self._chinese(text)
        return self._english(text)

    def _grammar(self, lang: str):  # nemo's Normalizer
        if lang not in self._nemo:
            from nemo_text_processing.text_normalization.normalize import (
                Normalizer as Nemo,
            )

            self._cache_dir.mkdir(parents=True, exist_ok=True)
            cache = str(self._cache_dir)
            self._nemo[lang] = Nemo(input_case="cased", lang=lang, cache_dir=cache)
        return self._nemo[lang]

    def _nemo_normalize(self, lang: str, text: str) -> str:
        return self._grammar(lang).normalize(text, verbose=False)  # type: ignore[attr-defined]

    def _english(self, text: str) -> str:
        try:
            held = self._glossed(CONTRACTION.sub(r"\1 is", text), "en")
            held, terms = _hold_terms(held)
            result = _release_terms(self._nemo_normalize("en", held), terms)
        except Exception:  # upstream keeps the text as given
            log.warning("English normalisation failed; text kept", exc_info=True)
            result = text
        return _MAP_EN(result)

    def _chinese(self, text: str) -> str:
        held = self._glossed(CONTRACTION.sub(r"\1 is", text), "zh")
        held, terms = _hold_terms(held.rstrip())
        held, pinyin = _hold(PINYIN_TONE, held, "pinyin")
        held, names = _hold(NAME, held, "n")
        try:
            result = self._nemo_normalize("zh", held)
        except Exception:  # upstream gives nothing
            log.warning("Chinese normalisation failed; text dropped", exc_info=True)
            result = ""
        result = _release(result, names, "n")
        result = _release(result, [_pinyin_spelling(p) for p in pinyin], "pinyin")
        return _MAP_ZH(_release_terms(result, terms))

    def _spanish(self, text: str) -> str:
        text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text or "")).strip()
        if not text:
            return ""
        try:
            result = self._nemo_normalize("es", text)
        except Exception:
            log.warning("Spanish normalisation failed; text kept", exc_info=True)
            result = text
        return _MAP_EN(result)

    def _glossed(self, text: str, lang: str) -> str:
        # Longest term first, so "PCIe 5.0" is read before "PCIe"; the reading
        # is a re.sub template, as upstream passes it.
        for term in sorted(self.glossary, key=len, reverse=True):
            value = self.glossary[term]
            reading = value.get(lang, term) if isinstance(value, Mapping) else value
            text = re.compile(re.escape(term), re.IGNORECASE).sub(reading, text)
        return text


def _hold(pattern: re.Pattern[str], text: str, tag: str) -> tuple[str, list[str]]:
    """Each distinct match of ``pattern`` replaced by ``<tag_a>``, ``<tag_b>``...
    (upstream dedupes through a set, whose order varies by process; first-seen
    order gives the same text unless one match contains another)."""
    found = ["".join(m) if isinstance(m, tuple) else m for m in pattern.findall(text)]
    held = list(dict.fromkeys(found))
    for i, item in enumerate(held):
        text = text.replace(item, f"<{tag}_{chr(ord('a') + i)}>")
    return text, held


def _release(text: str, held: list[str], tag: str) -> str:
    for i, item in enumerate(held):
        text = text.replace(f"<{tag}_{chr(ord('a') + i)}>", item)
    return text


def _hold_terms(text: str) -> tuple[str, list[str]]:
    terms = sorted(set(TECH_TERM.findall(text)), key=len, reverse=True)
    for term in terms:
        text = text.replace(term, term.replace("-", HYPHEN_HOLD))
    return text, terms


def _release_terms(text: str, terms: list[str]) -> str:
    # NeMo may space the placeholder out; upstream drops those spaces too.
    return re.sub(r"\s*<H>\s*", "-", text) if terms else text


def _pinyin_spelling(pinyin: str) -> str:
    if pinyin[0] not in "jqxJQX":
        return pinyin
    return JQX_U.sub(r"\g<1>v\g<2>\g<3>", pinyin).upper()
