"""TTS value types and cancellation (the registry: test_registry.py)."""

from __future__ import annotations

import time

import pytest

from daemon.engine.cancel import Cancelled, CancelToken
from daemon.engine.tts import SynthesisOptions


def test_cancel_token_fires_on_cancel_and_on_deadline():
    tok = CancelToken()
    tok.check()
    tok.cancel("client went away")
    with pytest.raises(Cancelled, match="client went away"):
        tok.check()
    late = CancelToken(deadline=time.monotonic() - 1)
    assert late.cancelled and "deadline" in late.reason


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"speed": 0}, "outside"),
        ({"speed": float("nan")}, "must be a number"),
        ({"speed": "fast"}, "must be a number"),
        ({"seed": -1}, "non-negative"),
        ({"seed": 1.5}, "non-negative"),
        ({"seed": True}, "non-negative"),
    ],
)
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SynthesisOptions(**kwargs)
