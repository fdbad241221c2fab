"""The speech body's engine knobs (IndexTTS-2's ``emo_alpha``, ``emo_vector``,
``max_mel_tokens``) reach the engine as ``SynthesisOptions.extra``, only when
given; a wrong type is a bad request naming the field before any engine."""

from __future__ import annotations

import pytest

from daemon.protocols.openai.requests import parse_speech
from daemon.service.edge.refusals import BadRequest

BODY = {"model": "tts-1", "voice": "v", "input": "hello"}


def test_given_knobs_reach_the_engine_and_absent_ones_do_not():
    assert parse_speech(BODY).request.options("v").extra == {}
    knobs = {"emo_alpha": 0.5, "emo_vector": [0.1] * 8, "max_mel_tokens": 40}
    extra = parse_speech({**BODY, **knobs}).request.options("v").extra
    assert extra == knobs


@pytest.mark.parametrize(
    ("field", "value"),
    [("emo_alpha", "high"), ("emo_vector", 0.5), ("max_mel_tokens", 1.5)],
)
def test_a_wrong_type_names_the_field(field, value):
    with pytest.raises(BadRequest) as caught:
        parse_speech({**BODY, field: value})
    assert field in str(caught.value)
