"""English number words in the exact forms upstream gets from ``inflect``.

Upstream's English normalizer (en_normalization/expend.py) calls
``inflect.number_to_words`` with ``andword=""`` for cardinals, a digit-pair reading
for years and the default ``andword="and"`` for ordinals; the wording below (hyphens,
group commas, "and") reproduces those outputs so the phones match.
"""

from __future__ import annotations

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_GROUPS = (
    "",
    "thousand",
    "million",
    "billion",
    "trillion",
    "quadrillion",
    "quintillion",
    "sextillion",
    "septillion",
    "octillion",
    "nonillion",
    "decillion",
)
_IRREGULAR_ORDINALS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
# Years read as digit pairs (expend._expand_number): 1001..2999.
_YEAR_FIRST, _YEAR_LAST = 1001, 2999


def _below_hundred(n: int) -> str:
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")


def _below_thousand(n: int, andword: str) -> str:
    hundreds, rest = divmod(n, 100)
    if not hundreds:
        return _below_hundred(rest)
    words = f"{_ONES[hundreds]} hundred"
    if rest:
        words += f" {andword} " if andword else " "
        words += _below_hundred(rest)
    return words


def cardinal(n: int, andword: str = "") -> str:
    """1234 -> "one thousand, two hundred thirty-four" (inflect's grouping)."""
    if n < 0:
        return "minus " + cardinal(-n, andword)
    if n < 1000:
        return _below_thousand(n, andword)
    groups: list[int] = []
    rest = n
    while rest:
        rest, group = divmod(rest, 1000)
        groups.append(group)
    if len(groups) > len(_GROUPS):
        # Beyond the named groups: read digit by digit.
        return " ".join(_ONES[int(d)] for d in str(n))
    parts = [
        (_below_thousand(g, andword) + (f" {_GROUPS[i]}" if _GROUPS[i] else ""), i)
        for i, g in reversed(list(enumerate(groups)))
        if g
    ]
    text = parts[0][0]
    for words, index in parts[1:]:
        # A trailing units group without hundreds joins with a space, others a comma.
        last_small = index == 0 and groups[0] < 100
        text += (f" {andword} " if andword else " ") if last_small else ", "
        text += words
    return text


def ordinal_words(words: str) -> str:
    """ "twenty-one" -> "twenty-first": rewrite the last word as an ordinal."""
    head, sep, last = max(
        (words.rpartition(" "), words.rpartition("-")), key=lambda p: len(p[0])
    )
    if last in _IRREGULAR_ORDINALS:
        last = _IRREGULAR_ORDINALS[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return head + sep + last


def ordinal(n: int) -> str:
    return ordinal_words(cardinal(n, andword="and"))


def _pair(two_digits: str) -> str:
    if two_digits[0] == "0":
        return "oh " + ("oh" if two_digits[1] == "0" else _ONES[int(two_digits[1])])
    return _below_hundred(int(two_digits))


def spoken_integer(n: int) -> str:
    """expend._expand_number: years 1001..2999 in pairs, other numbers as cardinals."""
    if not _YEAR_FIRST <= n <= _YEAR_LAST:
        return cardinal(n)
    if n == 2000:
        return "two thousand"
    if 2000 < n < 2010:
        return "two thousand " + cardinal(n % 100)
    if n % 100 == 0:
        return cardinal(n // 100) + " hundred"
    digits = str(n)
    return f"{_pair(digits[:2])} {_pair(digits[2:])}"
