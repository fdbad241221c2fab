"""Typed access to one YAML mapping, with errors that name the file and field.

Shared by the bundle manifest (``daemon/engine/bundle.py``) and the board profiles
(``board/profile.py``); each passes its own error class.  ``expected`` words the
types a field may have for every reader's errors (``serve``'s config, the HTTP
API), so they all say "an integer".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

#: Python types as JSON/YAML users know them.
TYPE_NAMES: Final = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    dict: "mapping",
    list: "list",
}


def expected(types: type | Iterable[type]) -> str:
    """``(int, str)`` → "an integer or a string"."""
    seq = [types] if isinstance(types, type) else list(types)
    return " or ".join(article(TYPE_NAMES.get(t, t.__name__)) for t in seq)


def article(noun: str) -> str:
    """The noun with "a" or "an" ("an integer", "a number")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


class Fields:
    """One mapping of a YAML document; ``where`` prefixes every error."""

    def __init__(self, data: Any, where: str, error: type[Exception] = ValueError):
        if not isinstance(data, Mapping):
            raise error(f"{where}: expected a mapping, got {type(data).__name__}")
        self.data, self.where, self.error = data, where, error
        self.used: set[str] = set()

    def value(self, key: str, required: bool = True) -> Any:
        """The raw value; ``None`` when absent or null and not ``required``."""
        self.used.add(key)
        v = self.data.get(key)
        if v is None and required:
            if key not in self.data:
                raise self.error(f"{self.where}: missing field {key!r}")
            raise self.error(f"{self.where}: {key} must not be null")
        return v

    def bad(self, key: str, want: str) -> Exception:
        return self.error(f"{self.where}: {key} must be {want}")

    def section(self, key: str, required: bool = True) -> Any:  # a Fields (subclass)
        v = self.value(key, required)
        if v is None:
            return None
        return type(self)(v, f"{self.where}: {key}", self.error)

    def mapping(self, key: str, required: bool = True) -> Mapping[str, Any]:
        v = self.value(key, required)
        if v is None:
            return {}
        if not isinstance(v, Mapping):
            raise self.bad(key, "a mapping")
        return v

    def text(self, key: str, required: bool = True) -> Any:
        v = self.value(key, required)
        if v is not None and (not isinstance(v, str) or not v):
            raise self.bad(key, "a non-empty string")
        return v

    def integer(self, key: str, minimum: int | None = None) -> int:
        v = self.value(key)
        if not isinstance(v, int) or isinstance(v, bool):
            raise self.bad(key, "an integer" if minimum is None else _at_least(minimum))
        if minimum is not None and v < minimum:
            raise self.bad(key, _at_least(minimum))
        return v

    def items(self, key: str) -> list[Any]:
        v = self.value(key)
        if not isinstance(v, list):
            raise self.bad(key, "a list")
        return v

    def strings(self, key: str) -> tuple[str, ...]:
        v = self.value(key)
        if not isinstance(v, list) or not all(isinstance(s, str) and s for s in v):
            raise self.bad(key, "a list of non-empty strings")
        return tuple(v)

    def reject_unknown(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise self.error(f"{self.where}: unknown field(s) {unknown}")


def _at_least(minimum: int) -> str:
    return "a non-negative integer" if minimum == 0 else f"an integer >= {minimum}"
