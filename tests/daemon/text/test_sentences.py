"""Sentence boundaries of streamed and whole texts (sentence-stream)."""

from __future__ import annotations

import pytest

from daemon.text.sentences import Sentence, SentenceStream, split_sentences

LIMIT = 4096


def stream(chunks: list[str], limit: int = LIMIT) -> list[list[str]]:
    """Sentences released after each chunk, then those the end releases."""
    s = SentenceStream(limit)
    out = [[x.text for x in s.add(c)] for c in chunks]
    return [*out, [x.text for x in s.finish()]]


@pytest.mark.parametrize(
    "chunks, released",
    [
        # An abbreviation: held until the text after it shows no sentence ended.
        (["Hello Mr.", " Smith, how", " are you today?"],
         [[], [], [], ["Hello Mr. Smith, how are you today?"]]),
        (["Ask Dr.", " Jones. ", "She knows."],
         [[], [], ["Ask Dr. Jones."], ["She knows."]]),
        # Initials
        (["J. R. R. Tolkien wrote", " books. ", "He died."],
         [[], [], ["J. R. R. Tolkien wrote books."], ["He died."]]),
        # A decimal split across chunks
        (["Pi is 3.", "14 roughly. ", "Next one."],
         [[], [], ["Pi is 3.14 roughly."], ["Next one."]]),
        # Tokens cut inside words; each sentence released as the next begins
        (["Hel", "lo wor", "ld. Th", "is is", " a test."],
         [[], [], ["Hello world."], [], [], ["This is a test."]]),
        # An ellipsis inside a sentence, then one before a capital
        (["I was... ", "thinking about it. ", "Well... ", "Maybe."],
         [[], [], ["I was... thinking about it."], ["Well..."], ["Maybe."]]),
        # CJK marks with no space after them
        (["你好。", "今天天气很好！", "是吗？"],
         [[], ["你好。"], ["今天天气很好！"], ["是吗？"]]),
        # Questions, exclamations, closing quotes
        (['He said "Stop!" ', "Then he left?! ", "Yes."],
         [[], ['He said "Stop!"'], ["Then he left?!"], ["Yes."]]),
    ],
)  # fmt: skip
def test_streamed_sentences(chunks: list[str], released: list[list[str]]) -> None:
    assert stream(chunks) == released


def test_whole_text_gives_the_same_sentences_as_its_stream() -> None:
    text = "Hello Mr. Smith, how are you? J. R. R. Tolkien wrote 3.5 books. 好。好！"
    tokens = [text[i : i + 3] for i in range(0, len(text), 3)]
    assert split_sentences(text) == [s for step in stream(tokens) for s in step]
    assert len(split_sentences(text)) == 4


def test_lowercase_after_a_period_is_not_a_new_sentence() -> None:
    assert split_sentences("e.g. this one. and that.") == ["e.g. this one. and that."]


def test_empty_and_blank_text_give_no_sentence() -> None:
    assert split_sentences("") == [] and split_sentences("  \n ") == []
    assert stream(["   ", "\n"]) == [[], [], []]


def test_text_without_an_end_is_let_go_at_the_limit_with_words_whole() -> None:
    s = SentenceStream(limit=20)
    got = s.add("alpha beta gamma delta epsilon zeta eta theta")
    assert got and all(len(x.text) <= 20 and not x.complete for x in got)
    rest = s.finish()
    words = " ".join(x.text for x in got + rest).split()
    assert words == "alpha beta gamma delta epsilon zeta eta theta".split()
    assert s.add("Short. ") == []  # the detector starts afresh


def test_a_long_sentence_is_cut_to_the_limit() -> None:
    s = SentenceStream(limit=10)
    got = s.add("abcdefghijklmnopqrstuvwxyz. Next")
    assert [x.text for x in got][:3] == ["abcdefghij", "klmnopqrst", "uvwxyz."]
    assert got[-1] == Sentence("uvwxyz.", complete=True)
