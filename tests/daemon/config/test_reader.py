"""The one typed reader: msgspec checks, one message shape for every mistake,
the same from config YAML, voice.yaml params and a JSON request."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import pytest
import yaml

from daemon.config.reader import INTERNAL, ReadError, fail, invalid, read
from daemon.config.wording import describe
from daemon.engines.piper.params import PiperParams
from daemon.protocols.openai.requests import SpeechBody
from daemon.sdk.bundles.manifest import BundleError
from daemon.service.config import ConfigError
from daemon.service.config_file import load_config
from tests.daemon.engines.piper.test_text import _params as piper_params

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


# --- one shape everywhere: config YAML, voice.yaml params, a JSON request -------

#: Each source with a good document, where its messages start, and how to read it.
#: a good voice.yaml ``params`` mapping (the Piper tests' own tiny voice)
PIPER = piper_params().to_dict()
SPEECH = {"model": "tts-1", "input": "Hello.", "voice": "alloy"}
#: (source, mistake) -> (change to the good document, path, found)
MISTAKES = {
    "wrong type": {
        "config": ({"limits": {"queue_size": "4"}}, "limits.queue_size", "'4'"),
        "params": ({"hop": "256"}, "hop", "'256'"),
        "request": ({"input": 5}, "input", "5"),
    },
    "missing key": {
        "config": ({"voices": [{"engine": "x"}]}, "voices[0].bundle", None),
        "params": ({"hop": None}, "hop", None),
        "request": ({"input": None}, "input", None),
    },
    "unknown key": {
        "config": ({"limitz": {}}, "", "['limitz']"),
        "params": (
            {"window": {"frames": 96, "overlap": 12, "o": 1}},
            "window",
            "['o']",
        ),
        "request": ({"inptu": "x"}, "", "['inptu']"),
    },
}


def _config(change: dict, tmp_path: Path) -> tuple[str, Exception]:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"voices": ["/v/joe"], **change}))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(path), info.value


def _params(change: dict, tmp_path: Path) -> tuple[str, Exception]:
    data = {k: v for k, v in {**PIPER, **change}.items() if v is not None}
    where = f"{tmp_path}/voice.yaml: params"
    with pytest.raises(BundleError) as info:
        PiperParams.from_dict(data, where)
    return where, info.value


def _request(change: dict, tmp_path: Path) -> tuple[str, Exception]:
    body = {k: v for k, v in {**SPEECH, **change}.items() if v is not None}
    with pytest.raises(ReadError) as info:
        read(msgspec.json.encode(body), SpeechBody, where="request")
    return "request", info.value


@pytest.mark.parametrize("source", ["config", "params", "request"])
@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_the_same_mistake_reads_the_same_everywhere(source, mistake, tmp_path):
    change, path, found = MISTAKES[mistake][source]
    where, exc = {"config": _config, "params": _params, "request": _request}[source](
        change, tmp_path
    )
    at = rf"{re.escape(path)}: " if path else ""
    if mistake == "unknown key":
        tail = r"expected only the fields \[.+\], found unknown field\(s\) "
        tail += re.escape(found)
    elif found is None:
        tail = r"expected [a-z].*, found nothing \(missing field\)"
    else:
        tail = rf"expected [a-z].*, found {re.escape(found)}"
    assert re.fullmatch(rf"{re.escape(where)}: {at}{tail}", str(exc)), str(exc)
    assert isinstance(exc, ValueError)
