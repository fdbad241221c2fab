"""VoicePrint / Cloning: what every cloning engine hands the service."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import Capabilities
from daemon.sdk.cloning import (
    CloneRequest,
    Cloning,
    CloningEngine,
    VoicePrint,
    unfit,
)
from daemon.sdk.tts import SynthesisOptions


def _print(**kw) -> VoicePrint:
    args = {
        "engine_id": "qwen3-tts",
        "model": "ab" * 32,
        "arrays": {"xvector": np.arange(4, dtype=np.float32)},
        "meta": {"seconds": 3.5, "rate": 24000, "source": "clip.wav"},
    }
    return VoicePrint(**{**args, **kw})


def test_arrays_are_copied_and_frozen():
    src = np.arange(4, dtype=np.float32)
    vp = _print(arrays={"xvector": src})
    src[0] = 99  # the caller's array changes; the print does not
    assert vp.arrays["xvector"][0] == 0
    with pytest.raises(ValueError, match="read-only"):
        vp.arrays["xvector"][1] = 5
    with pytest.raises(TypeError):
        vp.arrays["other"] = src  # type: ignore[index]
    assert vp.nbytes == 16


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"engine_id": ""}, "engine_id"),
        ({"model": ""}, "model"),
        ({"arrays": {"x-vector": np.zeros(2)}}, "not an identifier"),
        ({"arrays": {"x": np.array(["a"])}}, "found str"),
        ({"arrays": {"x": np.array([object()])}}, "found object"),
        ({"meta": {"ok": True}}, "str, int or float"),
        ({"meta": {"../x": 1}}, "not an identifier"),
    ],
)
def test_bad_prints_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        _print(**kw)


def test_cloning_bounds_are_checked():
    with pytest.raises(ValueError, match="min_seconds"):
        Cloning("m", 5.0, 3.0)
    with pytest.raises(ValueError, match="content id"):
        Cloning("", 1.0, 3.0)
    caps = Capabilities("tts", ("en",), 24000, max_input=10, cloning=Cloning("m", 1, 9))
    assert caps.cloning is not None and caps.cloning.transcript == "unused"


def test_unfit_says_why():
    vp = _print()
    fits = Cloning(vp.model, 1.0, 10.0)
    assert unfit(vp, "qwen3-tts", fits) is None
    assert "made by engine qwen3-tts, not gpt-sovits" in str(
        unfit(vp, "gpt-sovits", fits)
    )
    assert "does not clone" in str(unfit(vp, "qwen3-tts", None))
    other = unfit(vp, "qwen3-tts", Cloning("cd" * 32, 1.0, 10.0))
    assert other is not None and "abababababab" in other and "cdcdcdcdcdcd" in other


def test_options_carry_the_print_and_the_language():
    vp = _print()
    o = SynthesisOptions(voice="base", language="zh", voice_print=vp)
    assert o.voice_print is vp and o.language == "zh"
    assert (
        SynthesisOptions().voice_print is None and SynthesisOptions().language is None
    )


def test_check_refuses_what_the_rules_rule_out():
    clip = (np.zeros(16000, np.float32), 16000)
    scribe = Cloning("m", 1.0, 2.0, "required", max_aux=1)
    scribe.check("eng", "hello", [clip])  # a transcript and one aux clip: fine
    with pytest.raises(ValueError, match="eng: the clip's transcript is required"):
        scribe.check("eng", "  ", ())
    with pytest.raises(ValueError, match=r"eng: at most 1 aux clip\(s\), got 2"):
        scribe.check("eng", "hello", [clip, clip])
    Cloning("m", 1.0, 2.0).check("eng", None, ())  # "unused": none needed
    with pytest.raises(ValueError, match="at most 0 aux"):
        Cloning("m", 1.0, 2.0).check("eng", None, [clip])


class _Pitch:
    """A cloner whose print is the clip's length: what the base hands it."""

    capability = Cloning("m", 1.0, 2.0, "required", max_aux=1)

    def __init__(self) -> None:
        self.taken: list[CloneRequest] = []

    def clone(self, req: CloneRequest, cancel: CancelToken | None = None) -> VoicePrint:
        self.taken.append(req)
        return _print(meta={"n": len(req.audio), "aux": len(req.aux)})


class _Engine(CloningEngine):
    engine_id = "eng"
    no_cloner = "this bundle has no encoder"

    def __init__(self, cloner: _Pitch | None) -> None:
        self._cloner = cloner

    def cloner(self) -> _Pitch | None:
        return self._cloner


def test_clone_checks_the_rules_then_hands_the_cloner_the_request():
    clip = np.zeros(16000, np.float32)
    cloner = _Pitch()
    engine = _Engine(cloner)
    vp = engine.clone(clip, 16000, "hello", language="en", aux=[(clip[:8], 8000)])
    assert (vp.meta["n"], vp.meta["aux"]) == (16000, 1)
    (req,) = cloner.taken
    assert (req.sample_rate, req.transcript, req.language) == (16000, "hello", "en")
    with pytest.raises(ValueError, match="eng: the clip's transcript is required"):
        engine.clone(clip, 16000)
    with pytest.raises(ValueError, match="at most 1 aux"):
        engine.clone(clip, 16000, "hello", aux=[(clip, 16000)] * 2)
    assert len(cloner.taken) == 1  # refused before the cloner ran
    with pytest.raises(ValueError, match="eng: this bundle has no encoder"):
        _Engine(None).clone(clip, 16000, "hello")
