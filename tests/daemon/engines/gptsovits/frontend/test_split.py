"""Sentence splitting/packing; expectations derived by hand from docs/board.md."""

from __future__ import annotations

import re

import pytest

from daemon.engines.gptsovits.frontend import TextFrontend
from daemon.engines.gptsovits.frontend.split import (
    Segment,
    split_in_half,
    split_text,
    spoken_length,
)

TEN = "一二三四五六七八九十"  # ten spoken chars


def test_spoken_length_counts_after_normalization() -> None:
    assert spoken_length("2026年9月26日") == len("二零二六年九月二十六日")
    assert spoken_length("你好，世界！") == 4
    assert spoken_length("，。！😀") == 0
    assert spoken_length("Hello world") == 3  # vowel groups: e-o, o


def test_short_sentences_are_packed_together() -> None:
    assert split_text("你好。今天天气很好！") == [
        Segment("你好。今天天气很好！", "sentence")
    ]


def test_long_sentence_is_cut_at_commas_and_packed() -> None:
    text = f"{TEN}，{TEN}，{TEN}，{TEN}。"
    assert split_text(text) == [
        Segment(f"{TEN}，{TEN}，{TEN}，", "comma"),
        Segment(f"{TEN}。", "sentence"),
    ]


def test_clause_without_punctuation_is_hard_cut() -> None:
    text = TEN * 7
    segments = split_text(text)
    assert segments == [
        Segment(TEN * 3 + "。", "comma"),
        Segment(TEN * 3 + "。", "comma"),
        Segment(TEN + "。", "sentence"),
    ]


def test_length_is_counted_after_number_expansion() -> None:
    # 18 raw chars but 11 + 22 = 33 spoken chars: must not stay one segment.
    text = "2026年9月26日，" + "我们一起去公园散步吧然后回家吃饭休息一下吧。"
    segments = split_text(text)
    assert [s.text for s in segments] == [
        "2026年9月26日，",
        "我们一起去公园散步吧然后回家吃饭休息一下吧。",
    ]
    assert [s.end for s in segments] == ["comma", "sentence"]


def test_sentences_are_never_cut_inside_when_they_fit() -> None:
    a, b = "甲" * 20 + "。", "乙" * 20 + "！"
    assert split_text(a + b) == [Segment(a, "sentence"), Segment(b, "sentence")]


def test_short_piece_that_cannot_merge_is_kept() -> None:
    a, short, c = "甲" * 29 + "。", "好的呀。", "乙" * 28 + "。"  # 29+3, 3+28 > 30
    assert [s.text for s in split_text(a + short + c)] == [a, short, c]


def test_punctuation_only_sentence_attaches_to_previous() -> None:
    assert split_text("你好。——。") == [Segment("你好。——。", "sentence")]


def test_line_breaks() -> None:
    assert split_text("第一行\n第二行") == [Segment("第一行。第二行。", "sentence")]
    assert split_text("你好！\n世界") == [Segment("你好！世界。", "sentence")]


def test_period_is_an_end_mark_unless_between_digits() -> None:
    assert split_text("3.14是圆周率.对") == [Segment("3.14是圆周率。对。", "sentence")]


def test_english_text_is_split_and_counted() -> None:
    segments = split_text("Hello world. This is a test.")
    assert segments == [Segment("Hello world。This is a test。", "sentence")]


@pytest.mark.parametrize("text", ["，。！", "😀😀", "……"])
def test_nothing_to_speak_gives_no_segments(text: str) -> None:
    assert split_text(text) == []


@pytest.mark.parametrize("text", ["", " \n "])
def test_empty_text_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        split_text(text)


def test_split_in_half_prefers_sentence_ends(frontend: TextFrontend) -> None:
    seg = Segment("甲乙。丙丁戊己庚，辛壬癸子丑寅卯。", "comma")
    assert frontend.split_in_half(seg) == (
        Segment("甲乙。", "sentence"),
        Segment("丙丁戊己庚，辛壬癸子丑寅卯。", "comma"),
    )


def test_split_in_half_uses_commas_next(frontend: TextFrontend) -> None:
    seg = Segment("今天天气很好，我们去公园吧。", "sentence")
    assert frontend.split_in_half(seg) == (
        Segment("今天天气很好，", "comma"),
        Segment("我们去公园吧。", "sentence"),
    )


def test_split_in_half_falls_back_to_a_word_boundary(frontend: TextFrontend) -> None:
    seg = Segment("今天天气很好我们去公园吧。", "sentence")
    assert frontend.split_in_half(seg) == (
        Segment("今天天气很好，", "comma"),
        Segment("我们去公园吧。", "sentence"),
    )


def test_split_in_half_rejects_a_single_char(frontend: TextFrontend) -> None:
    with pytest.raises(ValueError, match="too short"):
        frontend.split_in_half(Segment("好。", "sentence"))


def test_split_in_half_english_uses_ascii_comma() -> None:
    words = lambda s: re.findall(r"\S+|\s+", s)  # noqa: E731 - space-separated words
    head, tail = split_in_half(
        Segment("one two three four five six", "sentence"), words
    )
    assert head == Segment("one two three,", "comma")
    assert tail == Segment("four five six。", "sentence")


def test_split_in_half_rejects_words_that_do_not_cover_the_text() -> None:
    with pytest.raises(ValueError, match="cover"):
        split_in_half(Segment("one two three four", "sentence"), lambda s: s.split(" "))
