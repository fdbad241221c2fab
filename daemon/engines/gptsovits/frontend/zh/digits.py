"""Chinese readings of digit strings, as upstream zh_normalization/num.py does."""

from __future__ import annotations

DIGIT_CHARS = "零一二三四五六七八九"
# Unit chars keyed by the power of ten they stand for; 万 and 亿 group four digits.
_UNITS = ((8, "亿"), (4, "万"), (3, "千"), (2, "百"), (1, "十"))
# Telephone-style reading of 1 ("yao") used for digit-by-digit numbers.
ALT_ONE = "幺"


def digits(value: str, alt_one: bool = False) -> str:
    """Read every digit on its own: "2026" -> 二零二六."""
    out = "".join(DIGIT_CHARS[int(d)] for d in value)
    return out.replace("一", ALT_ONE) if alt_one else out


def _grouped(value: str, use_zero: bool = True) -> list[str]:
    stripped = value.lstrip("0")
    if not stripped:
        return []
    if len(stripped) == 1:
        # A lone digit after dropped zeros is read with a leading 零 ("0005" -> 零五).
        if use_zero and len(stripped) < len(value):
            return [DIGIT_CHARS[0], DIGIT_CHARS[int(stripped)]]
        return [DIGIT_CHARS[int(stripped)]]
    power, unit = next((p, u) for p, u in _UNITS if p < len(stripped))
    head, tail = value[:-power], value[-power:]
    return _grouped(head) + [unit] + _grouped(tail)


def cardinal(value: str) -> str:
    """Unsigned integer string as a cardinal: "123456" -> 十二万三千四百五十六"""
    if not value:
        return ""
    value = value.lstrip("0")
    if not value:
        return DIGIT_CHARS[0]
    parts = _grouped(value)
    # 一十X is said 十X.
    if len(parts) >= 2 and parts[0] == DIGIT_CHARS[1] and parts[1] == "十":
        parts = parts[1:]
    return "".join(parts)


def number(value: str) -> str:
    """Read "12.30" -> 十二点三零: cardinal integer part, decimals digit by digit.

    Trailing zeros of the decimals collapse to a single zero, as upstream does.
    """
    pieces = value.split(".")
    if len(pieces) > 2:
        raise ValueError(f"number {value!r} has more than one decimal point")
    integer = pieces[0]
    decimal = pieces[1] if len(pieces) == 2 else ""
    result = cardinal(integer)
    decimal = decimal.rstrip("0") + "0" if decimal.endswith("0") else decimal
    if decimal:
        result = (result or DIGIT_CHARS[0]) + "点" + digits(decimal)
    return result
