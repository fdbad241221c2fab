"""Per-request settings: languages, speakers, x-vectors, text mode and sampling
overrides, with clear errors for what the engine refuses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from daemon.engines.qwen3.tts.options import Request, language_name
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.cloning import VoicePrint
from daemon.sdk.tts import SynthesisOptions
from tests.daemon.engines.qwen3.tts.test_params import CUSTOM, base

P = TtsParams.from_mapping(CUSTOM)
B = TtsParams.from_mapping(base())


def clone(x: Any, engine: str = "qwen3-tts", key: str = "xvector") -> VoicePrint:
    return VoicePrint(engine, "model-id", {key: np.asarray(x, np.float32)})


@pytest.mark.parametrize(
    ("hint", "name"),
    [(None, "auto"), ("", "auto"), ("AUTO", "auto"), ("zh", "chinese"),
     ("zh_CN", "chinese"), ("en-GB", "english"), ("English", "english"),
     ("german", "german"), ("de", "german")],
)  # fmt: skip
def test_languages_are_codes_or_names(hint: str | None, name: str) -> None:
    assert language_name(hint, P) == name


@pytest.mark.parametrize("hint", ["fr", "Klingon", "sichuan_dialect"])
def test_unknown_and_dialect_languages_are_refused(hint: str) -> None:
    """Dialects are reached through their speakers, as upstream's list."""
    with pytest.raises(
        ValueError, match=f"unsupported language '{hint}'; supported: auto"
    ):
        language_name(hint, P)


def test_defaults_come_from_the_bundle() -> None:
    r = Request.from_options(SynthesisOptions(seed=3), P)
    assert r.language == "auto" and r.speaker == "alice" and r.xvector is None
    assert r.text_mode == "non_streaming" and r.max_new_tokens == 300 and r.seed == 3
    s = r.sampling
    assert (s.do_sample, s.top_k, s.top_p, s.temperature) == (True, 30, 0.95, 0.8)
    assert (s.subtalker_top_k, s.subtalker_temperature) == (40, 0.7)
    assert s.suppress == (128, 1152) and s.min_new_tokens == 2


def test_extra_overrides_and_greedy() -> None:
    extra = {"greedy": True, "top_k": 5, "text_mode": "streaming", "max_new_tokens": 9,
             "subtalker_temperature": 0.5}  # fmt: skip
    r = Request.from_options(SynthesisOptions(extra=extra), P)
    assert not r.sampling.do_sample and not r.sampling.subtalker_do_sample
    assert r.sampling.top_k == 5 and r.sampling.subtalker_temperature == 0.5
    assert r.text_mode == "streaming" and r.max_new_tokens == 9


def test_speakers_by_voice_or_speaker_any_case() -> None:
    assert Request.from_options(SynthesisOptions(voice="bob"), P).speaker == "bob"
    assert (
        Request.from_options(SynthesisOptions(speaker="Chengdu"), P).speaker
        == "chengdu"
    )
    # a voice name that is not a speaker (the bundle's own): the first speaker
    assert (
        Request.from_options(SynthesisOptions(voice="qwen3-tiny"), P).speaker == "alice"
    )


def test_a_clone_gives_the_xvector_row() -> None:
    x = np.arange(64, dtype=np.float32)
    r = Request.from_options(SynthesisOptions(voice_print=clone(x)), B)
    assert r.speaker is None and r.xvector is not None
    np.testing.assert_array_equal(r.xvector, x)
    assert r.text_mode == "streaming"  # upstream's voice-clone default
    assert Request.from_options(SynthesisOptions(), B).xvector is None


@pytest.mark.parametrize(
    ("params", "options", "message"),
    [
        (
            P,
            SynthesisOptions(speaker="nobody"),
            "unknown speaker 'nobody'; known: alice",
        ),
        (
            P,
            SynthesisOptions(voice_print=clone(np.zeros(64))),
            "a CustomVoice bundle speaks with its own speakers",
        ),
        (B, SynthesisOptions(speaker="alice"), "a Base bundle has no speakers"),
        (
            B,
            SynthesisOptions(
                voice_print=clone(np.zeros(64), engine="gpt-sovits-v2pro")
            ),
            "made by 'gpt-sovits-v2pro'",
        ),
        (
            B,
            SynthesisOptions(voice_print=clone(np.zeros(64), key="ge")),
            "arrays ['ge']",
        ),
        (
            B,
            SynthesisOptions(voice_print=clone(np.zeros(32))),
            "x-vector has shape [32], this bundle needs [64] finite floats",
        ),
        (P, SynthesisOptions(language="xx"), "unsupported language 'xx'"),
        (
            P,
            SynthesisOptions(extra={"max_new_tokens": 301}),
            "max_new_tokens: expected an integer in [1, 300], found 301",
        ),
        (P, SynthesisOptions(extra={"text_mode": "icl"}), "text_mode: expected"),
        (P, SynthesisOptions(extra={"top_p": 0}), "top_p: expected"),
        (
            P,
            SynthesisOptions(extra={"temperature": float("inf")}),
            "temperature: expected a finite",
        ),
        (P, SynthesisOptions(extra={"speed": 2}), "expected only the fields"),
    ],
)
def test_refused_options_say_why(
    params: TtsParams, options: SynthesisOptions, message: str
) -> None:
    with pytest.raises(ValueError, match="qwen3-tts") as err:
        Request.from_options(options, params)
    assert message in str(err.value)
