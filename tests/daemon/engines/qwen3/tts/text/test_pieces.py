"""Text cut into pieces the graphs hold: whole when it fits, else at sentences,
then clauses, words and characters; pieces are slices of the text."""

from __future__ import annotations

import pytest

from daemon.engines.qwen3.tts.text.pieces import pieces

TEXT = (
    "Hello there. This is a test, with clauses; and more. "
    "你好。今天天气很好，我们去公园吧！Okay fine."
)


def at_most(n: int):
    return lambda s: len(s) <= n


def test_a_text_that_fits_is_one_piece() -> None:
    assert pieces(f"  {TEXT}\n", at_most(500)) == [TEXT]


def test_blank_text_has_no_pieces() -> None:
    assert pieces(" \n\t", at_most(10)) == []


def test_sentences_are_packed_while_they_fit() -> None:
    got = pieces(TEXT, at_most(60))
    assert got == [
        "Hello there. This is a test, with clauses; and more. 你好。",
        "今天天气很好，我们去公园吧！Okay fine.",
    ]


@pytest.mark.parametrize("limit", [30, 12, 5, 1])
def test_every_piece_fits_and_the_text_is_kept(limit: int) -> None:
    got = pieces(TEXT, at_most(limit))
    assert all(len(p) <= limit for p in got)
    assert "".join(got).replace(" ", "") == TEXT.replace(" ", "")


def test_a_long_sentence_is_cut_at_clauses_before_words() -> None:
    got = pieces(TEXT, at_most(12))
    assert got[:5] == [
        "Hello there.",
        "This is a",
        "test, with",
        "clauses;",
        "and more.",
    ]
    assert "你好。今天天气很好，" in got  # CJK: cut at the comma, never spaced


def test_cjk_without_breaks_is_cut_inside() -> None:
    assert pieces("天气很好我们去公园", at_most(4)) == ["天气很好", "我们去公", "园"]
