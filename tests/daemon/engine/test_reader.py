"""The one typed reader: msgspec checks, one message shape for every mistake."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import pytest

from daemon.engine.reader import INTERNAL, ReadError, describe, fail, invalid, read

Count = Annotated[int, msgspec.Meta(ge=1)]


@dataclasses.dataclass(frozen=True)
class Limits:
    queue: Count = 4
    timeout: Annotated[float, msgspec.Meta(gt=0)] = 1.0
    socket: Path | None = Path("/run/x.sock")
    backend: Literal["qnn", "cpu"] = "qnn"

    def __post_init__(self) -> None:
        if self.queue == 13:
            raise invalid("queue", "a lucky number", self.queue)


@dataclasses.dataclass(frozen=True)
class Voice:
    bundle: Path
    engine: str | None = None


@dataclasses.dataclass(frozen=True)
class Doc:
    voices: tuple[Voice, ...]
    limits: Limits = Limits()
    ids: dict[str, tuple[Annotated[int, msgspec.Meta(ge=0)], ...]] = dataclasses.field(
        default_factory=dict
    )
    source: Path | None = dataclasses.field(default=None, metadata=INTERNAL)


class Request(msgspec.Struct, frozen=True):
    text: Annotated[str, msgspec.Meta(min_length=1)]
    speed: float = 1.0


class _Err(ValueError):
    pass


def test_reads_into_frozen_dataclasses_with_defaults_and_paths():
    doc = read(
        {"voices": [{"bundle": "/v/joe"}], "limits": {"timeout": 2}}, Doc, where="f"
    )
    assert doc.voices == (Voice(Path("/v/joe")),)
    assert doc.limits == Limits(timeout=2.0) and isinstance(doc.limits.timeout, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.limits.queue = 2  # type: ignore[misc]


def test_null_is_absent_unless_the_type_admits_none():
    doc = read(
        {"voices": [], "limits": {"queue": None, "socket": None}}, Doc, where="f"
    )
    assert doc.limits.queue == 4 and doc.limits.socket is None


@pytest.mark.parametrize(
    "data, message",
    [
        (
            {"voices": [], "limits": {"queue": "4"}},
            "f: limits.queue: expected an integer >= 1, found '4'",
        ),
        (
            {"voices": [], "limits": {"queue": True}},
            "f: limits.queue: expected an integer >= 1, found True",
        ),
        (
            {"voices": [], "limits": {"timeout": 0}},
            "f: limits.timeout: expected a number > 0, found 0",
        ),
        (
            {"voices": [], "limits": {"backend": "gpu"}},
            "f: limits.backend: expected one of ['cpu', 'qnn'], found 'gpu'",
        ),
        (
            {"voices": [], "limits": {"queue": 13}},
            "f: limits.queue: expected a lucky number, found 13",
        ),
        ({"voices": [], "limits": [1]}, "f: limits: expected a mapping, found [1]"),
        ({"voices": "a"}, "f: voices: expected a list, found 'a'"),
        (
            {"voices": [{"bundle": 3}]},
            "f: voices[0].bundle: expected a path string, found 3",
        ),
        (
            {"voices": [{"engine": "x"}]},
            "f: voices[0].bundle: expected a path string, "
            "found nothing (missing field)",
        ),
        ({}, "f: voices: expected a list, found nothing (missing field)"),
        (
            {"voices": [], "ids": {"a": [1], "b": [2, -1]}},
            "f: ids['b'][1]: expected an integer >= 0, found -1",
        ),
        (
            {"voices": [], "limits": {"zz": 1, "aa": 2}},
            "f: limits: expected only the fields ['backend', 'queue', 'socket', "
            "'timeout'], found unknown field(s) ['aa', 'zz']",
        ),
        (
            {"voices": [], "source": "/x"},
            "f: expected only the fields ['ids', 'limits', 'voices'], "
            "found unknown field(s) ['source']",
        ),
        ([1, 2], "f: expected a mapping, found [1, 2]"),
    ],
)
def test_every_mistake_has_one_shape(data, message):
    with pytest.raises(ReadError) as info:
        read(data, Doc, where="f")
    assert str(info.value) == message


def test_json_bytes_and_structs():
    assert read(b'{"text": "hi"}', Request, where="request") == Request("hi")
    with pytest.raises(
        ReadError, match=r"^request: text: expected a non-empty string, found ''$"
    ):
        read(b'{"text": ""}', Request, where="request")
    with pytest.raises(
        ReadError,
        match=r"^request: expected only the fields \['speed', 'text'\], "
        r"found unknown field\(s\) \['voice'\]$",
    ):
        read(b'{"text": "a", "voice": "x"}', Request, where="request")
    with pytest.raises(ReadError, match="^request: invalid JSON: "):
        read(b'{"text"', Request, where="request")


def test_the_callers_error_class_and_long_values_cut():
    with pytest.raises(_Err, match=r"found 'xxxx.*\.\.\.$") as info:
        read({"text": "a", "speed": "x" * 500}, Request, where="r", error=_Err)
    assert len(str(info.value)) < 120
    assert str(fail("f", "listen.group", "an existing group", "nope")) == (
        "f: listen.group: expected an existing group, found 'nope'"
    )


def test_descriptions():
    assert describe(Count) == "an integer >= 1"
    assert describe(int | None) == "an integer or null"
    assert describe(tuple[str, str]) == "a list of 2 items"
    assert (
        describe(Annotated[list[int], msgspec.Meta(min_length=1)]) == "a non-empty list"
    )
