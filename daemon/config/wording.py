"""How the reader words a message: what a type looks like, and a found value.

A YAML or JSON user reads "an integer >= 1" or "one of ['wav', 'pcm']", not a
Python type; a found value is its ``repr``, cut short (a request may carry
4096 characters).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec

#: Longest ``repr`` of a found value in a message.
MAX_SHOWN: Final = 60


def shown(value: Any) -> str:
    """``repr`` cut to :data:`MAX_SHOWN` characters."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def describe(type_: Any) -> str:
    """What a value of ``type_`` looks like to a YAML/JSON user ("an integer >= 1")."""
    return _describe(msgspec.inspect.type_info(type_))


def _describe(info: msgspec.inspect.Type) -> str:
    t = msgspec.inspect
    if isinstance(info, t.Metadata):  # Meta(description="an absolute path")
        words = (info.extra_json_schema or {}).get("description")
        return words or _describe(info.type)
    if isinstance(info, t.UnionType):
        return " or ".join(_describe(x) for x in info.types)
    if isinstance(info, t.IntType | t.FloatType):
        noun = "an integer" if isinstance(info, t.IntType) else "a number"
        return noun + _bounds(info)
    if isinstance(info, t.StrType):
        if info.min_length == 1 and info.max_length is None and not info.pattern:
            return "a non-empty string"
        return (
            "a string"
            + _lengths(info)
            + (f" matching {info.pattern!r}" if info.pattern else "")
        )
    if isinstance(info, t.LiteralType):
        return f"one of {list(info.values)}"
    if isinstance(info, t.TupleType):
        return f"a list of {len(info.item_types)} items"
    if isinstance(info, t.ListType | t.VarTupleType | t.SetType | t.FrozenSetType):
        if info.min_length == 1 and info.max_length is None:
            return "a non-empty list"
        return "a list" + _lengths(info)
    if isinstance(info, t.DictType | t.DataclassType | t.StructType | t.TypedDictType):
        return "a mapping"
    if isinstance(info, t.CustomType) and info.cls is Path:
        return "a path string"
    names = {t.BoolType: "a boolean", t.NoneType: "null", t.AnyType: "any value"}
    return names.get(type(info), type(info).__name__)


def _bounds(info: Any) -> str:
    if info.ge is not None and info.le is not None:
        return f" in [{info.ge}, {info.le}]"
    marks = (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))
    parts = [
        f"{op} {getattr(info, a)}" for a, op in marks if getattr(info, a) is not None
    ]
    return (" " + " and ".join(parts)) if parts else ""


def _lengths(info: Any) -> str:
    lo, hi = info.min_length, info.max_length
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f" of length >= {lo}"
    return f" of length <= {hi}" if lo is None else f" of length {lo}..{hi}"
