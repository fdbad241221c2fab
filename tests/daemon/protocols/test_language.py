"""``language`` reaches the engine from both protocols (SynthesisOptions.language)."""

from __future__ import annotations

from daemon.protocols.openai.requests import parse_speech
from daemon.protocols.wyoming.requests import stream_request, synthesize_request


def test_openai_language_reaches_the_options():
    body = {"model": "tts-1", "voice": "v", "input": "你好", "language": "zh"}
    req = parse_speech(body).request
    assert req.language == "zh"
    assert req.options("v").language == "zh"
    plain = parse_speech({**body, "language": None}).request
    assert plain.options("v").language is None


def test_wyoming_language_reaches_the_options():
    req = synthesize_request({"text": "hi", "voice": {"language": "english"}})
    assert req.options("v").language == "english"
    opening = stream_request({"voice": {"name": "v", "language": "zh"}})
    assert opening.options("v").language == "zh"
    assert synthesize_request({"text": "hi"}).options(None).language is None
