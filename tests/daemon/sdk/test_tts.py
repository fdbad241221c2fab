"""TTS value types, cancellation, and what the TTS engines declare (the
registry: test_registry.py)."""

from __future__ import annotations

import time

import pytest

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cancel import Cancelled, CancelToken
from daemon.sdk.capabilities import MAX_SPEED, MIN_SPEED, Capabilities
from daemon.sdk.local import open_engine
from daemon.sdk.tts import MAX_TEXT_CHARS, SynthesisOptions, TtsEngine
from daemon.service.edge.refusals import BadRequest
from daemon.service.edge.requests import SynthesisRequest, check


def test_cancel_token_fires_on_cancel_and_on_deadline():
    tok = CancelToken()
    tok.check()
    tok.cancel("client went away")
    with pytest.raises(Cancelled, match="client went away"):
        tok.check()
    late = CancelToken(deadline=time.monotonic() - 1)
    assert late.cancelled and "deadline" in late.reason


def _declares_its_bundle(engine, bundle: Bundle) -> Capabilities:  # noqa: ANN001
    assert isinstance(engine, TtsEngine) and type(engine).task == "tts"
    caps = engine.capabilities()
    assert caps.task == "tts" and caps.streaming
    assert caps.languages == tuple(bundle.languages)
    assert caps.sample_rate_out == engine.sample_rate == bundle.sample_rate
    assert caps.max_input == MAX_TEXT_CHARS  # no engine limits text length
    return caps


def test_piper_declares_what_it_accepts(pytestconfig):
    from tests.piper_bundles import CPU_OPTIONS, bundle_dir

    root = bundle_dir(pytestconfig, CPU_OPTIONS)
    with open_engine(root, "cpu") as (engine, _):
        caps = _declares_its_bundle(engine, Bundle.load(root))
        assert caps.speakers == () and caps.speed_range == (MIN_SPEED, MAX_SPEED)
        for speed in caps.speed_range:  # both ends are accepted before any graph
            engine.synthesize("Hi.", SynthesisOptions(speed=speed)).close()


def test_gpt_sovits_declares_upstreams_speed_range(gsv_voice):
    bundle = Bundle.load(gsv_voice / "bundle")
    with open_engine(bundle, "cpu") as (engine, _):
        caps = _declares_its_bundle(engine, bundle)
        # upstream's WebUI sliders (speed.py); older bundles declare None
        assert caps.speakers == () and caps.speed_range == (0.6, 1.65)
        # what it declares is what the one request check refuses
        with pytest.raises(BadRequest) as err:
            check(SynthesisRequest("你好。", speed=1.7), caps)
        assert str(err.value) == "speed: expected a number in [0.6, 1.65], found 1.7"
        check(SynthesisRequest("你好。", speed=1.25), caps)
