"""Chinese non-standard words: dates, times, units, arithmetic, phone numbers, numbers.

Each pattern and its reading mirror upstream GPT-SoVITS zh_normalization (chronology,
num, phonecode, quantifier); ``verbalize`` applies them in upstream's order, which
matters because earlier rules consume digits that later, more general ones would read
differently.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from daemon.engines.gptsovits.frontend.zh import digits as num

_Rule = Callable[[re.Match[str]], str]

# Measure words after which a number reads as a cardinal (num.py COM_QUANTIFIERS).
_QUANTIFIERS = (
    "(处|台|架|枚|趟|幅|平|方|堵|间|床|株|批|项|例|列|篇|栋|注|亩|封|艘|把|目|套|段|人|所|"
    "朵|匹|张|座|回|场|尾|条|个|首|阙|阵|网|炮|顶|丘|棵|只|支|袭|辆|挑|担|颗|壳|窠|曲|墙|群|"
    "腔|砣|座|客|贯|扎|捆|刀|令|打|手|罗|坡|山|岭|江|溪|钟|队|单|双|对|出|口|头|脚|板|跳|枝|"
    "件|贴|针|线|管|名|位|身|堂|课|本|页|家|户|层|丝|毫|厘|分|钱|两|斤|担|铢|石|钧|锱|忽|"
    "(千|毫|微)克|毫|厘|(公)分|分|寸|尺|丈|里|寻|常|铺|程|(千|分|厘|毫|微)米|米|撮|勺|合|升|"
    "斗|石|盘|碗|碟|叠|桶|笼|盆|盒|杯|钟|斛|锅|簋|篮|盘|桶|罐|瓶|壶|卮|盏|箩|箱|煲|啖|袋|钵|"
    "年|月|日|季|刻|时|周|天|秒|分|小时|旬|纪|岁|世|更|夜|春|夏|秋|冬|代|伏|辈|丸|泡|粒|颗|"
    "幢|堆|条|根|支|道|面|片|张|颗|块|元|(亿|千万|百万|万|千|百)|(亿|千万|百万|万|千|百|美|)元|"
    "(亿|千万|百万|万|千|百|十|)吨|(亿|千万|百万|万|千|百|)块|角|毛|分)"
)
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹ˣʸⁿ"
_POWER_CHARS = dict(zip(_SUPERSCRIPTS, "0123456789xyn", strict=True))
_OPERAND = (
    rf"((-?)((\d+)(\.\d+)?[{_SUPERSCRIPTS}]*)|(\.\d+[{_SUPERSCRIPTS}]*)"
    rf"|([A-Za-z][{_SUPERSCRIPTS}]*))"
)
_OPERATOR_READINGS = {"+": "加", "-": "减", "×": "乘", "÷": "除", "=": "等于"}
_UNITS_FOR_TO_RANGE = (
    "(%|°C|℃|度|摄氏度|cm2|cm²|cm3|cm³|cm|db|ds|kg|km|m2|m²|m³|m3|ml|m|mm|s)"
)
_SIGNED = r"((-?)((\d+)(\.\d+)?)|(\.(\d+)))"
# Unit abbreviations, replaced as plain substrings in this order (quantifier.py).
MEASURES = {
    "cm2": "平方厘米",
    "cm²": "平方厘米",
    "cm3": "立方厘米",
    "cm³": "立方厘米",
    "cm": "厘米",
    "db": "分贝",
    "ds": "毫秒",
    "kg": "千克",
    "km": "千米",
    "m2": "平方米",
    "m²": "平方米",
    "m³": "立方米",
    "m3": "立方米",
    "ml": "毫升",
    "m": "米",
    "mm": "毫米",
    "s": "秒",
}

RE_DATE = re.compile(
    r"(\d{4}|\d{2})年((0?[1-9]|1[0-2])月)?(((0?[1-9])|((1|2)[0-9])|30|31)([日号]))?"
)
RE_DATE2 = re.compile(r"(\d{4})([- /.])(0[1-9]|1[012])\2(0[1-9]|[12][0-9]|3[01])")
_CLOCK = r"([0-1]?[0-9]|2[0-3]):([0-5][0-9])(:([0-5][0-9]))?"
RE_TIME = re.compile(_CLOCK)
RE_TIME_RANGE = re.compile(_CLOCK + r"(~|-)" + _CLOCK)
RE_TO_RANGE = re.compile(
    _SIGNED + _UNITS_FOR_TO_RANGE + "[~]" + _SIGNED + _UNITS_FOR_TO_RANGE
)
RE_TEMPERATURE = re.compile(r"(-?)(\d+(\.\d+)?)(°C|℃|度|摄氏度)")
RE_ASMD = re.compile(_OPERAND + r"([\+\-\×÷=])" + _OPERAND)
RE_POWER = re.compile(f"[{_SUPERSCRIPTS}]+")
RE_FRAC = re.compile(r"(-?)(\d+)/(\d+)")
RE_PERCENTAGE = re.compile(r"(-?)(\d+(\.\d+)?)%")
RE_MOBILE = re.compile(
    r"(?<!\d)((\+?86 ?)?1([38]\d|5[0-35-9]|7[678]|9[89])\d{8})(?!\d)"
)
RE_TELEPHONE = re.compile(r"(?<!\d)((0(10|2[1-3]|[3-9]\d{2})-?)?[1-9]\d{6,7})(?!\d)")
RE_UNIFORM_NUMBER = re.compile(r"(400)(-)?\d{3}(-)?\d{4}")
RE_RANGE = re.compile(
    r"(?<![\d\+\-\×÷=])((-?)((\d+)(\.\d+)?))[-~]((-?)((\d+)(\.\d+)?))(?![\d\+\-\×÷=])"
)
RE_NEGATIVE = re.compile(r"(-)(\d+)")
RE_VERSION = re.compile(r"((\d+)(\.\d+)(\.\d+)?(\.\d+)+)")
RE_DECIMAL = re.compile(r"(-?)((\d+)(\.\d+))|(\.(\d+))")
RE_QUANTIFIED = re.compile(r"(\d+)([多余几\+])?" + _QUANTIFIERS)
RE_DIGIT_STRING = re.compile(r"\d{3}\d*")
RE_NUMBER = re.compile(r"(-?)((\d+)(\.\d+)?)|(\.(\d+))")


def _clock_part(value: str) -> str:
    # Minutes/seconds keep a spoken leading zero: 10:05 -> 十点零五分.
    result = num.number(value.lstrip("0"))
    return num.DIGIT_CHARS[0] + result if value.startswith("0") else result


def _clock(hour: str, minute: str, second: str | None, half_minute: str) -> str:
    out = f"{num.number(hour)}点"
    if minute.lstrip("0"):
        # Upstream tests the FIRST clock's minute for 半 even in a range's second
        # clock (half_minute); kept for parity.
        out += "半" if int(half_minute) == 30 else f"{_clock_part(minute)}分"
    if second and second.lstrip("0"):
        out += f"{_clock_part(second)}秒"
    return out


def _time(m: re.Match[str]) -> str:
    out = _clock(m.group(1), m.group(2), m.group(4), m.group(2))
    if m.re is RE_TIME_RANGE:
        out += "至" + _clock(m.group(6), m.group(7), m.group(9), m.group(2))
    return out


def _date(m: re.Match[str]) -> str:
    out = f"{num.digits(m.group(1))}年"
    if m.group(3):
        out += f"{num.cardinal(m.group(3))}月"
    if m.group(5):
        out += f"{num.cardinal(m.group(5))}{m.group(9)}"
    return out


def _date2(m: re.Match[str]) -> str:
    return (
        f"{num.digits(m.group(1))}年{num.cardinal(m.group(3))}月"
        f"{num.cardinal(m.group(4))}日"
    )


def _temperature(m: re.Match[str]) -> str:
    sign = "零下" if m.group(1) else ""
    unit = "摄氏度" if m.group(4) == "摄氏度" else "度"
    return f"{sign}{num.number(m.group(2))}{unit}"


def _measures(text: str) -> str:
    for abbr, reading in MEASURES.items():
        text = text.replace(abbr, reading)
    return text


def _asmd(m: re.Match[str]) -> str:
    return m.group(1) + _OPERATOR_READINGS[m.group(8)] + m.group(9)


def _power(m: re.Match[str]) -> str:
    return "的" + "".join(_POWER_CHARS[c] for c in m.group(0)) + "次方"


def _fraction(m: re.Match[str]) -> str:
    sign = "负" if m.group(1) else ""
    return f"{sign}{num.number(m.group(3))}分之{num.number(m.group(2))}"


def _percentage(m: re.Match[str]) -> str:
    sign = "负" if m.group(1) else ""
    return f"{sign}百分之{num.number(m.group(2))}"


def _phone_parts(text: str, sep: str | None) -> str:
    parts = text.strip("+").split() if sep is None else text.split(sep)
    return "，".join(num.digits(p, alt_one=True) for p in parts)


def _mobile(m: re.Match[str]) -> str:
    return _phone_parts(m.group(0), None)


def _telephone(m: re.Match[str]) -> str:
    return _phone_parts(m.group(0), "-")


def _signed_number(m: re.Match[str]) -> str:
    if m.group(5):
        return num.number(m.group(5))
    return ("负" if m.group(1) else "") + num.number(m.group(2))


def _range(m: re.Match[str]) -> str:
    first = RE_NUMBER.sub(_signed_number, m.group(1))
    second = RE_NUMBER.sub(_signed_number, m.group(6))
    return f"{first}到{second}"


def _negative(m: re.Match[str]) -> str:
    return "负" + num.number(m.group(2))


def _version(m: re.Match[str]) -> str:
    return "".join("点" if c == "." else num.number(c) for c in m.group(1))


def _quantified(m: re.Match[str]) -> str:
    value = num.number(m.group(1))
    value = "两" if value == "二" else value
    approx = "多" if m.group(2) == "+" else (m.group(2) or "")
    return f"{value}{approx}{m.group(3)}"


def _digit_string(m: re.Match[str]) -> str:
    return num.digits(m.group(0), alt_one=True)


_RULES: tuple[tuple[re.Pattern[str], _Rule], ...] = (
    (RE_DATE, _date),
    (RE_DATE2, _date2),
    (RE_TIME_RANGE, _time),
    (RE_TIME, _time),
    (RE_TO_RANGE, lambda m: m.group(0).replace("~", "至")),
    (RE_TEMPERATURE, _temperature),
)
_NUMBER_RULES: tuple[tuple[re.Pattern[str], _Rule], ...] = (
    (RE_POWER, _power),
    (RE_FRAC, _fraction),
    (RE_PERCENTAGE, _percentage),
    (RE_MOBILE, _mobile),
    (RE_TELEPHONE, _telephone),
    (RE_UNIFORM_NUMBER, _telephone),
    (RE_RANGE, _range),
    (RE_NEGATIVE, _negative),
    (RE_VERSION, _version),
    (RE_DECIMAL, _signed_number),
    (RE_QUANTIFIED, _quantified),
    (RE_DIGIT_STRING, _digit_string),
    (RE_NUMBER, _signed_number),
)


def verbalize(sentence: str) -> str:
    """Spell out every number-like token of one (simplified, half-width) sentence."""
    for pattern, rule in _RULES:
        sentence = pattern.sub(rule, sentence)
    sentence = _measures(sentence)
    # Arithmetic chains ("1+2=3") need several passes: each pass rewrites every
    # other operator because matches cannot overlap.
    while RE_ASMD.search(sentence):
        sentence = RE_ASMD.sub(_asmd, sentence)
    for pattern, rule in _NUMBER_RULES:
        sentence = pattern.sub(rule, sentence)
    return sentence
