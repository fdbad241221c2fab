"""Transcription responses: the formats' exact text and the SSE delta rule."""

from __future__ import annotations

import json

from daemon.protocols.openai.transcripts import Deltas, Transcription
from daemon.sdk.asr import Transcript


def _final(text: str, start: float, end: float, lang: str | None = None):
    return Transcript(text, True, start, end, lang)


ZH = Transcription(
    (_final("你好。", 0.0, 1.25, "Chinese"), _final(" 世界", 3661.5, 3662.0)), 3662.5
)


def test_text_joins_segments_as_upstream_joins_chunks():
    assert ZH.text == "你好。 世界"
    assert ZH.render("text") == "你好。 世界\n"
    assert json.loads(ZH.render("json")) == {
        "text": "你好。 世界",
        "usage": {"type": "duration", "seconds": 3662.5},
    }


def test_verbose_json_reports_the_detected_language_and_segments():
    out = json.loads(ZH.render("verbose_json"))
    assert (out["language"], out["duration"], out["task"]) == (
        "Chinese",
        3662.5,
        "transcribe",
    )
    assert [(s["id"], s["start"], s["end"], s["text"]) for s in out["segments"]] == [
        (0, 0.0, 1.25, "你好。"),
        (1, 3661.5, 3662.0, " 世界"),
    ]
    assert out["language_code"] == "zh"
    hinted = Transcription((), 1.0, language="en")
    out = json.loads(hinted.render("verbose_json"))
    assert (out["language"], out["language_code"]) == ("English", "en")


def test_segments_languages_merge_as_upstream_merges_chunks():
    """qwen-asr's merge_languages: empty ones skipped, a run kept once; a
    detected language wins over the request's hint; codes spelled as names."""
    langs = ["Chinese", None, "Chinese", "English", "", "en", "Chinese"]
    segments = tuple(_final("x", i, i + 1.0, lang) for i, lang in enumerate(langs))
    out = json.loads(Transcription(segments, 8.0, "fr").render("verbose_json"))
    assert out["language"] == "Chinese,English,Chinese"
    assert out["language_code"] == "zh,en,zh"
    silent = Transcription((_final("", 0.0, 1.0),), 1.0)
    out = json.loads(silent.render("verbose_json"))
    assert (out["language"], out["language_code"]) == ("", "")


def test_srt_and_vtt_cues_with_hours():
    assert ZH.render("srt") == (
        "1\n00:00:00,000 --> 00:00:01,250\n你好。\n\n"
        "2\n01:01:01,500 --> 01:01:02,000\n世界\n"
    )
    assert ZH.render("vtt") == (
        "WEBVTT\n\n00:00:00.000 --> 00:00:01.250\n你好。\n\n"
        "01:01:01.500 --> 01:01:02.000\n世界\n"
    )
    empty = Transcription((), 2.0)
    assert (empty.render("srt"), empty.render("vtt")) == ("", "WEBVTT\n")


def test_deltas_follow_growing_partials_and_never_retract():
    d = Deltas()
    partial = [Transcript(t, False, 0.0, 1.0) for t in ("he", "hello", "hello wo")]
    assert [d.push(t) for t in partial] == ["he", "llo", " wo"]
    assert d.push(_final("hello world", 0.0, 1.0)) == "rld"
    # Next segment: starts from nothing again.
    assert d.push(Transcript("Bye", False, 1.0, 2.0)) == "Bye"
    # A final that does not extend what was sent adds nothing.
    assert d.push(_final("Goodbye", 1.0, 2.0)) == ""
    assert d.push(_final("again", 2.0, 3.0)) == "again"
