"""Chinese text normalization: upstream's zh_normalization + chinese2.text_normalize.

The result contains only CJK ideographs U+4E00..U+9FA5 and the punctuation phones
``! ? … , . -``, one char per BERT token and per word2ph entry.
"""

from __future__ import annotations

import re
import string

from daemon.engines.gptsovits.frontend._data import traditional_to_simplified_map
from daemon.engines.gptsovits.frontend.symbols import PUNCTUATION
from daemon.engines.gptsovits.frontend.zh.nsw import verbalize

# Full-width ASCII letters/digits sit 0xFEE0 above their half-width forms (U+FF01..).
_FULLWIDTH_OFFSET = 0xFEE0
_HALF_WIDTH = {
    ord(c) + _FULLWIDTH_OFFSET: c for c in string.ascii_letters + string.digits
} | {0x3000: " "}

_SENTENCE_BREAK = re.compile(r"([：、，；。？！,;?!][”’]?)")
_DROPPED_BEFORE = re.compile(r"[——《》【】<>{}()（）#&@“”^_|\\]")
_DROPPED_AFTER = re.compile(r"[-——《》【】<=>{}()（）#&@“”^_|\\]")
_SYMBOL_READINGS = {
    "/": "每",
    **dict(zip("①②③④⑤⑥⑦⑧⑨⑩", "一二三四五六七八九十", strict=True)),
    "α": "阿尔法",
    "β": "贝塔",
    "γ": "伽玛",
    "Γ": "伽玛",
    "δ": "德尔塔",
    "Δ": "德尔塔",
    "ε": "艾普西龙",
    "ζ": "捷塔",
    "η": "依塔",
    "θ": "西塔",
    "Θ": "西塔",
    "ι": "艾欧塔",
    "κ": "喀帕",
    "λ": "拉姆达",
    "Λ": "拉姆达",
    "μ": "缪",
    "ν": "拗",
    "ξ": "克西",
    "Ξ": "克西",
    "ο": "欧米克伦",
    "π": "派",
    "Π": "派",
    "ρ": "肉",
    "ς": "西格玛",
    "Σ": "西格玛",
    "σ": "西格玛",
    "τ": "套",
    "υ": "宇普西龙",
    "φ": "服艾",
    "Φ": "服艾",
    "χ": "器",
    "ψ": "普赛",
    "Ψ": "普赛",
    "ω": "欧米伽",
    "Ω": "欧米伽",
    "+": "加",
    "-": "减",
    "×": "乘",
    "÷": "除",
    "=": "等",
}
_SYMBOL_TABLE = str.maketrans(_SYMBOL_READINGS)
#: Symbols and Greek letters read aloud by their Chinese names.
READ_SYMBOLS = frozenset(_SYMBOL_READINGS)
# chinese2.rep_map: punctuation folded onto the six punctuation phones.
_PUNCT_FOLD = {
    "：": ",",
    "；": ",",
    "，": ",",
    "。": ".",
    "！": "!",
    "？": "?",
    "\n": ".",
    "·": ",",
    "、": ",",
    "...": "…",
    "$": ".",
    "/": ",",
    "—": "-",
    "~": "…",
    "～": "…",
}
_PUNCT_FOLD_RE = re.compile("|".join(re.escape(k) for k in _PUNCT_FOLD))
_PUNCT_CLASS = "".join(re.escape(p) for p in PUNCTUATION)
_NOT_KEPT = re.compile(rf"[^\u4e00-\u9fa5{_PUNCT_CLASS}]+")
_PUNCT_RUN = re.compile(rf"([{_PUNCT_CLASS}])([{_PUNCT_CLASS}])+")


def to_simplified(text: str) -> str:
    return text.translate(traditional_to_simplified_map())


def split_sentences(text: str) -> list[str]:
    """Upstream TextNormalizer._split: drop spaces/brackets, break after ，。 etc."""
    text = _DROPPED_BEFORE.sub("", text.replace(" ", ""))
    text = _SENTENCE_BREAK.sub("\\1\n", text).strip()
    return [s.strip() for s in re.split(r"\n+", text)]


def normalize_sentence(sentence: str) -> str:
    """Verbalize one sentence (TextNormalizer.normalize_sentence)."""
    sentence = to_simplified(sentence).translate(_HALF_WIDTH)
    sentence = verbalize(sentence)
    sentence = sentence.translate(_SYMBOL_TABLE)
    return _DROPPED_AFTER.sub("", sentence)


def verbalized_sentences(text: str) -> list[str]:
    """Numbers, dates, units ... spelled out, punctuation kept as written."""
    return [normalize_sentence(s) for s in split_sentences(text)]


def fold_punctuation(text: str) -> str:
    """chinese2.replace_punctuation: keep ideographs and the punctuation phones only."""
    text = text.replace("嗯", "恩").replace("呣", "母")
    text = _PUNCT_FOLD_RE.sub(lambda m: _PUNCT_FOLD[m.group(0)], text)
    return _NOT_KEPT.sub("", text)


def collapse_punctuation(text: str) -> str:
    """A run of punctuation phones keeps its first char ("?!." -> "?")."""
    return _PUNCT_RUN.sub(r"\1", text)


def normalize_zh(text: str) -> str:
    """The text the Chinese G2P and BERT read (chinese2.text_normalize)."""
    folded = "".join(fold_punctuation(s) for s in verbalized_sentences(text))
    return collapse_punctuation(folded)
