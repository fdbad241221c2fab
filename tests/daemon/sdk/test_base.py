"""The engine shells: requirements from the engine's own declarations, a load
that refuses another engine's bundle, bad params and graphs it does not run
before building anything, no call answered before ``load`` or after
``close``; a TTS engine's ``synthesize`` with the options unset."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np
import pytest

from daemon.sdk.base import EngineBase
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.bundles.needs import GraphNeeds
from daemon.sdk.capabilities import VoiceInfo
from daemon.sdk.registry import Engine
from daemon.sdk.tts import AudioChunk, SynthesisOptions, TtsEngine, TtsEngineBase

ECHO = "test-echo"


@dataclass(frozen=True)
class Params:
    width: Annotated[int, msgspec.Meta(ge=1)]


class Echo(EngineBase[Params, str]):
    """An engine of one graph ``g`` that takes x [1, width]."""

    engine_id = ECHO
    task = "tts"
    params_type = Params
    built: list[str] = []

    @staticmethod
    def needs(params: Params) -> GraphNeeds:
        return {"g": {"x": (1, params.width)}}

    def build(self, bundle: Bundle, params: Params, graphs: Mapping[str, Any]) -> str:
        self.built.append(bundle.name)
        return f"{bundle.name} at width {params.width}"

    def voices(self) -> list[VoiceInfo]:
        return [self.voice("an echo", ("hexvoice", ""))]

    def capabilities(self) -> Any:
        raise NotImplementedError

    def warmup(self) -> None:
        pass


def _bundle(engine: str = ECHO, width: Any = 4, x: int = 4) -> Bundle:
    spec = {"name": "x", "dtype": "float32", "shape": [1, x]}
    graph = {"file": "graphs/g.bin", "sha256": "0" * 64, "inputs": [spec],
             "outputs": [{**spec, "name": "y"}]}  # fmt: skip
    data = {"format": 1, "engine": engine, "name": "echo", "sample_rate": 16000,
            "languages": ["en", "de"], "params": {"width": width},
            "graphs": {"g": graph}}  # fmt: skip
    return Bundle.from_dict(Path("/voices/echo"), data)


def test_an_engine_of_the_shell_is_an_engine_and_declares_its_graphs() -> None:
    assert isinstance(Echo(), Engine)
    assert Echo.requirements(_bundle()) == {"g": {"x": (1, 4)}}
    assert Echo.graph_needs(Params(2), {}) == {"g": {"x": (1, 2)}}
    with pytest.raises(BundleError, match=r"/voices/echo: params: width: expected "):
        Echo.requirements(_bundle(width=0))


def test_nothing_is_answered_before_load_or_after_close() -> None:
    engine = Echo()
    for read_it in (lambda: engine.model, lambda: engine.bundle, engine.voices):
        with pytest.raises(RuntimeError, match="test-echo engine: load"):
            read_it()
    b = _bundle()
    engine.load(b, b.graphs)
    assert engine.model == "echo at width 4" and engine.bundle is b
    assert engine.voices() == [
        VoiceInfo("echo", ("en", "de"), "an echo", attribution=("hexvoice", ""))
    ]
    assert engine.voice("", ("", ""), name="other", languages=["fr"]).languages == (
        "fr",
    )
    engine.close()
    with pytest.raises(RuntimeError, match="load"):
        engine.model  # noqa: B018


def test_load_refuses_before_building_anything() -> None:
    Echo.built.clear()
    engine = Echo()
    other = _bundle(engine="piper-vits")
    with pytest.raises(BundleError, match="engine 'piper-vits', not 'test-echo'"):
        engine.load(other, other.graphs)
    narrow = _bundle(x=3)  # the graph takes [1, 3], the engine feeds [1, 4]
    with pytest.raises(BundleError, match=r"graph g: 'x' is \[1, 3\], the engine "
                       r"uses \[1, 4\]"):  # fmt: skip
        engine.load(narrow, narrow.graphs)
    with pytest.raises(BundleError, match="graph 'g' is missing"):
        engine.load(_bundle(), {})
    assert Echo.built == [] and engine._model is None


class Speaker(TtsEngineBase[Params, str]):
    """A TTS engine of the same graph that keeps the options it was given."""

    engine_id = ECHO
    params_type = Params
    graph_needs = Echo.graph_needs
    voices = Echo.voices
    capabilities = Echo.capabilities
    warmup = Echo.warmup
    given: list[SynthesisOptions] = []

    def build(self, bundle: Bundle, params: Params, graphs: Mapping[str, Any]) -> str:
        return "a speaker"

    def speak(
        self, text: str, options: SynthesisOptions, cancel: Any
    ) -> Iterator[AudioChunk]:
        self.given.append(options)
        return iter([AudioChunk(np.zeros(1, np.float32), self.sample_rate)])


def test_a_tts_shell_synthesizes_with_unset_options_as_none_set() -> None:
    engine = Speaker()
    b = _bundle()
    engine.load(b, b.graphs)
    assert isinstance(engine, TtsEngine) and Speaker.task == "tts"
    assert engine.sample_rate == 16000
    (chunk,) = engine.synthesize("hi")
    assert chunk.sample_rate == 16000
    asked = SynthesisOptions(speed=2.0, seed=7)
    engine.synthesize("hi", asked)
    assert Speaker.given[0] == SynthesisOptions() and Speaker.given[1] is asked
