"""English text normalization, mirroring upstream english.text_normalize + expend.py."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from daemon.engines.gptsovits.frontend.en import number_words as words

# Upstream's english.rep_map escapes its regex keys, so only these three literal
# replacements ever fire; other CJK punctuation is deleted by the final filter.
_FOLD = {"。": ".", "！": "!", "？": "?"}
_FOLD_TABLE = str.maketrans(_FOLD)
_PUNCT = "!?…,.-"
_MEASURES = {
    "m": ("meter", "meters"),
    "km": ("kilometer", "kilometers"),
    "km/h": ("kilometer per hour", "kilometers per hour"),
    "ft": ("feet", "feet"),
    "L": ("liter", "liters"),
    "tbsp": ("tablespoon", "tablespoons"),
    "tsp": ("teaspoon", "teaspoons"),
    "h": ("hour", "hours"),
    "min": ("minute", "minutes"),
    "s": ("second", "seconds"),
    "°C": ("degree celsius", "degrees celsius"),
    "°F": ("degree fahrenheit", "degrees fahrenheit"),
}
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹ˣʸⁿ"
_OPERAND = (
    rf"((-?)((\d+)(\.\d+)?[{_SUPERSCRIPTS}]*)|(\.\d+[{_SUPERSCRIPTS}]*)"
    rf"|([A-Za-z][{_SUPERSCRIPTS}]*))"
)
_OPERATORS = {
    "+": " plus ",
    "-": " minus ",
    "×": " times ",
    "÷": " divided by ",
    "=": " Equals ",
}

RE_LIST_ORDINAL = re.compile(r"\b([0-9]+)\. ")
RE_ASMD = re.compile(_OPERAND + r"\s+([\+\-\×÷=])\s+" + _OPERAND)
RE_NEGATIVE = re.compile(r"(?:^|\s+)(-)(\d+)")
RE_GROUPED = re.compile(r"([0-9][0-9\,]+[0-9])")
RE_TIME = re.compile(r"\b([01]?[0-9]|2[0-3]):([0-5][0-9])\b")
RE_MEASURE = re.compile(
    r"\b([0-9]+(\.[0-9]+)?(m|km|km/h|ft|L|tbsp|tsp|h|min|s|°C|°F))\b"
)
RE_POUNDS = (re.compile(r"£([0-9\.\,]*[0-9]+)"), re.compile(r"([0-9\.\,]*[0-9]+)£"))
RE_DOLLARS = (re.compile(r"\$([0-9\.\,]*[0-9]+)"), re.compile(r"([(0-9\.\,]*[0-9]+)\$"))
RE_DECIMAL = re.compile(r"([0-9]+\.\s*[0-9]+)")
RE_FRACTION = re.compile(r"([0-9]+/[0-9]+)")
RE_ORDINAL = re.compile(r"[0-9]+(st|nd|rd|th)")
RE_INTEGER = re.compile(r"[0-9]+")
_NOT_KEPT = re.compile(r"[^ A-Za-z'.,?!\-]")
_INNER_CAPITAL = re.compile(r"(?<!^)(?<![\s])([A-Z])")
_PUNCT_RUN = re.compile(rf"([{re.escape(_PUNCT)}\s])([{re.escape(_PUNCT)}])+")


def _list_ordinal(m: re.Match[str]) -> str:
    n = int(m.group(1))
    suffix = (
        "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    )
    return f"{n}{suffix}, "


def _asmd(m: re.Match[str]) -> str:
    return m.group(1) + _OPERATORS[m.group(8)] + m.group(9)


def _time(m: re.Match[str]) -> str:
    hours, minutes = int(m.group(1)), int(m.group(2))
    period = "a.m." if hours < 12 else "p.m."
    hours = hours - 12 if hours > 12 else hours
    if minutes == 0:
        return f"{words.cardinal(hours)} o'clock {period}"
    return f"{words.cardinal(hours)} {words.cardinal(minutes)} {period}"


def _measure(m: re.Match[str]) -> str:
    unit = m.group(3)
    value = int(m.group(1).replace(unit, "").replace(".", ""))
    singular = m.group(2) is None and value == 1
    return m.group(1).replace(unit, " " + _MEASURES[unit][0 if singular else 1])


def _money(
    major: tuple[str, str], minor: tuple[str, str], zero: str
) -> Callable[[re.Match[str]], str]:
    def expand(m: re.Match[str]) -> str:
        parts = m.group(1).split(".")
        if len(parts) > 2:
            return f"{m.group(1)} {major[1]}"
        big = int(parts[0]) if parts[0] else 0
        small = int(parts[1].ljust(2, "0")) if len(parts) > 1 and parts[1] else 0
        big_txt = f"{big} {major[0] if big == 1 else major[1]}"
        small_txt = f"{small} {minor[0] if small == 1 else minor[1]}"
        if big and small:
            return f"{big_txt} and {small_txt}"
        return big_txt if big else small_txt if small else zero

    return expand


def _decimal(m: re.Match[str]) -> str:
    whole, frac = m.group(1).split(".")
    return whole + " point " + " ".join(frac)


def _fraction(m: re.Match[str]) -> str:
    numerator, denominator = (int(x) for x in m.group(0).split("/"))
    head = words.cardinal(numerator, andword="and")
    if denominator == 1:
        return head
    if denominator == 2:
        return f"{head} {'half' if numerator == 1 else 'halves'}"
    tail = words.ordinal_words(words.cardinal(denominator, andword="and"))
    return f"{head} {tail}{'s' if numerator > 1 else ''}"


def _ordinal(m: re.Match[str]) -> str:
    return words.ordinal(int(m.group(0)[:-2]))


def _integer(m: re.Match[str]) -> str:
    return words.spoken_integer(int(m.group(0)))


def expand(text: str) -> str:
    """expend.normalize: numbers, money, units and times spelled out."""
    text = RE_LIST_ORDINAL.sub(_list_ordinal, text)
    while RE_ASMD.search(text):
        text = RE_ASMD.sub(_asmd, text)
    # Upstream drops the space before a leading minus too: "a -5" -> "anegative 5".
    text = RE_NEGATIVE.sub(lambda m: f"negative {m.group(2)}", text)
    text = RE_GROUPED.sub(lambda m: m.group(1).replace(",", ""), text)
    text = RE_TIME.sub(_time, text)
    text = RE_MEASURE.sub(_measure, text)
    pounds = _money(("pound", "pounds"), ("penny", "pence"), "zero pounds")
    dollars = _money(("dollar", "dollars"), ("cent", "cents"), "zero dollars")
    for pattern in RE_POUNDS:
        text = pattern.sub(pounds, text)
    for pattern in RE_DOLLARS:
        text = pattern.sub(dollars, text)
    text = RE_DECIMAL.sub(_decimal, text)
    text = RE_FRACTION.sub(_fraction, text)
    text = RE_ORDINAL.sub(_ordinal, text)
    text = RE_INTEGER.sub(_integer, text)
    text = "".join(
        c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn"
    )
    text = text.replace("%", " percent")
    text = _NOT_KEPT.sub("", text)
    text = re.sub(r"(?i)i\.e\.", "that is", text)
    text = re.sub(r"(?i)e\.g\.", "for example", text)
    # Split camel case and acronyms into letters/words: "OpenAI" -> "Open A I".
    return _INNER_CAPITAL.sub(r" \1", text)


def normalize_en(text: str) -> str:
    """The English text the English G2P reads (english.text_normalize)."""
    text = expand(text.translate(_FOLD_TABLE))
    return _PUNCT_RUN.sub(r"\1", text)
