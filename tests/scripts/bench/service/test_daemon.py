"""The daemon benchmark's throughput count: only audio counts as served."""

from __future__ import annotations

from scripts.bench.service.daemon import HttpRefused, Run, outcome


def test_an_http_error_body_is_not_counted_as_audio() -> None:
    # a 429's JSON body used to count as a served request's audio
    assert outcome(None, HttpRefused(429)) == "busy"
    assert outcome(None, HttpRefused(503)) == "busy"
    assert outcome(None, HttpRefused(400)) == "failed"
    assert outcome(None, OSError("socket gone")) == "failed"


def test_audio_is_served_and_an_empty_wyoming_reply_is_busy() -> None:
    assert outcome(Run(0.1, 0.5, 1.2), None) == "ok"
    assert outcome(Run(0.0, 0.1, 0.0), None) == "busy"
