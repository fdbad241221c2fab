"""Languages as responses name them: upstream's names (daemon/text/languages.py)."""

from __future__ import annotations

from daemon.text.languages import name_of, reported, transcript_language


def test_name_of() -> None:
    assert [name_of(x) for x in ("en", "en_US", "zh-CN", "eNGLISH", "tl", "xx")] == [
        "English",
        "English",
        "Chinese",
        "English",
        "Filipino",
        "xx",
    ]


def test_reported_merges_as_upstream() -> None:
    assert reported(["English", "en", None, "Chinese", "", "English"]) == (
        "English,Chinese,English",
        "en,zh,en",
    )
    assert reported([]) == ("", "")


def test_a_transcript_names_what_was_heard_else_the_hint() -> None:
    assert transcript_language("en", ["Chinese", "Chinese"]) == "Chinese"
    assert transcript_language("en", [None]) == "English"
    assert transcript_language(None, []) is None
