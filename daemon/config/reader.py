"""The one typed reader for every mapping we parse: config YAML, ``voice.yaml``,
engine params, board profiles, JSON requests.

A caller declares the shape as frozen dataclasses (or ``msgspec.Struct``\\ s) with
``Annotated[..., msgspec.Meta(...)]`` constraints and ``Literal`` choices, and
calls::

    cfg = read(mapping_or_json_bytes, ServeConfig, where="/etc/hexvoice/config.yaml")

``msgspec`` (``msgspec.convert``, strict: no ``"4"`` for 4, no ``true`` for 1)
checks types and constraints; this module only words its errors.  Every refusal
is a :class:`ReadError` (or the caller's ``error=`` class) with one shape::

    <where>: <path.to[0].field>: expected <what>, found <repr>

e.g. ``config.yaml: limits.queue_size: expected an integer >= 1, found '4'``.  The
three usual mistakes read alike wherever they happen:

- wrong type or value: ``found <the value>``;
- missing key: ``found nothing (missing field)``;
- unknown key: ``<path of its mapping>: expected only the fields [...], found
  unknown field(s) [...]`` (typos fail loudly, with the known names listed).

Rules shared by every reader:

- ``null`` means absent: a field with a default takes its default unless its
  type admits ``None`` (then ``null`` is ``None``, e.g. "this listener is off").
- A field whose ``dataclasses.field`` metadata is :data:`INTERNAL` is not read
  (it is set by code, e.g. ``ServeConfig.source``); naming it is an unknown field.
- ``pathlib.Path`` fields take strings.
- ``Meta(description="an absolute path")`` words the "expected" part of a type
  whose constraint alone reads badly (a ``pattern``).
- Checks across fields go in ``__post_init__`` and raise :func:`invalid`; msgspec
  adds the path, so they read like the rest.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from daemon.config.wording import describe, shown

T = TypeVar("T")

#: ``dataclasses.field(metadata=INTERNAL)``: set by code, never read from data.
INTERNAL: Final = {"hexvoice.reader": "internal"}
_MISSING: Final = object()
# msgspec's error text: "<message> - at `$.a[0].b`" (the suffix is absent at the top).
_AT = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]|(\[\.\.\.\])")
_MISSING_FIELD = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")
# A message of ours (``invalid``) naming a field below the object msgspec names.
_OURS = re.compile(
    r"^(?P<field>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*): (?P<rest>.*)$"
)


class ReadError(ValueError):
    """A mapping does not have the declared shape; the message says where."""


def read(
    data: Any,
    type_: type[T],
    *,
    where: str,
    error: Callable[[str], Exception] = ReadError,
) -> T:
    """``data`` (a parsed mapping, or JSON ``bytes``) as a ``type_`` instance.

    ``where`` names the source (a file, ``"command line"``, ``"request"``) and
    starts every message ("" when the caller adds its own prefix); ``error`` is
    the exception class raised with it.
    """
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            data = msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            raise error(f"{_join(where, '')}invalid JSON: {exc}") from None
    data = _prepare(data, type_, "", where, error)
    try:
        return msgspec.convert(data, type_, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        raise error(_join(where, "") + _house_style(str(exc), data, type_)) from None


def invalid(field: str, expected: str, found: Any, *, raw: bool = False) -> ValueError:
    """For ``__post_init__`` checks: ``raise invalid("overlap", "...", v)``.

    ``field`` is relative to the object checked ("" for the object itself);
    ``raw`` puts ``found`` in as words, not as a ``repr``."""
    head = f"{field}: " if field else ""
    return ValueError(
        f"{head}expected {expected}, found {found if raw else shown(found)}"
    )


def fail(
    where: str,
    path: str,
    expected: str,
    found: Any,
    error: Callable[[str], Exception] = ReadError,
) -> Exception:
    """The same message for a check made after reading (e.g. a group exists)."""
    return error(f"{_join(where, path)}expected {expected}, found {shown(found)}")


# --- before msgspec: unknown keys, null as absent ---------------------------------


def _prepare(data: Any, tp: Any, path: str, where: str, error: Callable) -> Any:
    tp = _narrow(tp, data)
    if isinstance(data, Mapping) and _is_record(tp):
        fields = _fields(tp)
        known = sorted(
            name for name, (_, _, internal) in fields.items() if not internal
        )
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise error(
                f"{_join(where, path)}expected only the fields {known}, "
                f"found unknown field(s) {unknown}"
            )
        return {
            k: _prepare(v, fields[k][0], _sub(path, k), where, error)
            for k, v in data.items()
            # null means absent: the default (unless None is a value here)
            if not (v is None and fields[k][1] and not _admits_none(fields[k][0]))
        }
    if isinstance(data, Mapping):
        return {
            k: _prepare(v, _child(tp, k), f"{path}[{k!r}]", where, error)
            for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [
            _prepare(v, _child(tp, i), f"{path}[{i}]", where, error)
            for i, v in enumerate(data)
        ]
    return data


def _narrow(tp: Any, data: Any) -> Any:
    """``tp`` without ``Annotated``; of a union, the arm ``data``'s kind fits."""
    tp = _strip(tp)
    if _is_union(tp):
        for arm in map(_strip, typing.get_args(tp)):
            if _kind_fits(data, arm):
                return arm
    return tp


def _child(tp: Any, key: Any) -> Any:
    """The type of field, index or dict key ``key`` of a (narrowed) ``tp``."""
    if _is_record(tp):
        field = _fields(tp).get(key)
        return field[0] if field else Any
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (dict, Mapping) and len(args) == 2:
        return args[1]
    if origin is tuple and args and args[-1] is not Ellipsis:  # fixed length
        return args[key] if isinstance(key, int) and key < len(args) else Any
    return args[0] if origin in (list, tuple, set, frozenset) and args else Any


@functools.cache
def _fields(cls: type) -> dict[str, tuple[Any, bool, bool]]:
    """name -> (annotated type, has a default, internal)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    if dataclasses.is_dataclass(cls):
        return {
            f.name: (
                hints[f.name],
                f.default is not dataclasses.MISSING
                or f.default_factory is not dataclasses.MISSING,
                f.metadata.get("hexvoice.reader") == "internal",
            )
            for f in dataclasses.fields(cls)
        }
    return {
        f.encode_name: (hints[f.name], not f.required, False)
        for f in msgspec.structs.fields(cls)
    }


def _is_record(tp: Any) -> bool:
    return isinstance(tp, type) and (
        dataclasses.is_dataclass(tp) or issubclass(tp, msgspec.Struct)
    )


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _strip(tp: Any) -> Any:
    """The type without ``Annotated`` constraints."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _admits_none(tp: Any) -> bool:
    tp = _strip(tp)
    if tp is None or tp is type(None) or tp is Any:
        return True
    return _is_union(tp) and any(_admits_none(t) for t in typing.get_args(tp))


def _kind_fits(data: Any, tp: Any) -> bool:
    """Whether ``data`` could be a ``tp`` by its JSON kind (to pick a union arm)."""
    origin = typing.get_origin(tp) or tp
    if isinstance(data, Mapping):
        return _is_record(tp) or origin in (dict, Mapping)
    if isinstance(data, list | tuple):
        return origin in (list, tuple, set, frozenset)
    return False


def _dec_hook(tp: type, value: Any) -> Any:
    if tp is Path:
        if isinstance(value, str):
            return Path(value)
        raise ValueError(f"expected a path string, found {shown(value)}")
    raise NotImplementedError(tp)


# --- after msgspec: its ValidationError in the house style ------------------------


def _house_style(text: str, data: Any, type_: Any) -> str:
    m = _AT.match(text)
    assert m is not None  # the pattern matches any text
    msg, path, value, tp = m["msg"], "", data, type_
    for name, index, any_key in _SEGMENT.findall(m["path"] or ""):
        tp = _narrow(tp, value)
        if any_key:  # msgspec does not say which key of a dict failed
            key: Any = _failing_key(value, _child(tp, None))
        else:
            key = int(index) if index else name
        path = _sub(path, name) if name else f"{path}[{key!r}]"
        tp, value = _child(tp, key), _get(value, key)
    missing = _MISSING_FIELD.match(msg)
    if missing:
        path, tp = (
            _sub(path, missing["name"]),
            _child(_narrow(tp, value), missing["name"]),
        )
        return (
            f"{_join('', path)}expected {describe(tp)}, found nothing (missing field)"
        )
    if msg.startswith(("Expected `", "Invalid enum value")):
        return f"{_join('', path)}expected {describe(tp)}, found {shown(value)}"
    ours = _OURS.match(msg)
    if ours:  # invalid("field", ...) raised in a __post_init__
        return f"{_join('', _sub(path, ours['field']))}{ours['rest']}"
    return f"{_join('', path)}{msg}"


def _get(value: Any, key: Any) -> Any:
    if isinstance(value, Mapping):
        return value.get(key, _MISSING)
    if isinstance(value, list | tuple) and isinstance(key, int) and key < len(value):
        return value[key]
    return _MISSING


def _failing_key(value: Any, tp: Any) -> Any:
    for key, item in value.items() if isinstance(value, Mapping) else ():
        try:
            msgspec.convert(item, tp, dec_hook=_dec_hook)
        except msgspec.ValidationError:
            return key
    return "..."


def _sub(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _join(where: str, path: str) -> str:
    """``"where: path: "`` with empty parts left out."""
    return "".join(f"{p}: " for p in (where, path) if p)
