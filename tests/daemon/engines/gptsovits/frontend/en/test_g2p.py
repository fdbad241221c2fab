from __future__ import annotations

import pytest

from daemon.engines.gptsovits.frontend.en.g2p import EnglishG2P
from daemon.engines.gptsovits.frontend.en.normalize import normalize_en


@pytest.fixture(scope="module")
def g2p() -> EnglishG2P:
    return EnglishG2P()


def test_dictionary_words(g2p: EnglishG2P) -> None:
    assert g2p("Hello world.") == ["HH", "AH0", "L", "OW1", "W", "ER1", "L", "D", "."]


def test_upstream_overrides_and_removals(g2p: EnglishG2P) -> None:
    assert g2p("json") == ["JH", "EY1", "S", "AH0", "N"]  # engdict-hot.rep
    assert g2p("ai") == ["EY1", "AY1"]  # removed from CMU -> spelled


def test_unknown_word_uses_dictionary_pieces(g2p: EnglishG2P) -> None:
    # Not in CMU; upstream would ask g2p_en's neural model.
    assert g2p("hexvoice") == g2p("hex") + g2p("voice")


def test_unknown_word_without_pieces_is_spelled(g2p: EnglishG2P) -> None:
    assert g2p("xqzt") == g2p("x") + g2p("q") + g2p("z") + g2p("t")


def test_possessive(g2p: EnglishG2P) -> None:
    # Bases unknown to CMU, so the 's rule (not a dictionary entry) decides.
    assert g2p("hexvoice's") == g2p("hexvoice") + ["AH0", "Z"]  # sibilant S
    assert g2p("hexbook's") == g2p("hexbook") + ["S"]  # voiceless K
    assert g2p("hexdog's") == g2p("hexdog") + ["Z"]  # voiced G


def test_capital_a_and_apostrophe(g2p: EnglishG2P) -> None:
    assert g2p("A") == ["EY1"] and g2p("a") == ["AH0"]
    assert g2p("'hi'")[0] == "-"  # a quote becomes the "-" phone upstream


def test_normalize_reads_numbers_money_and_times() -> None:
    text = normalize_en("I paid $6.24 at 13:30 in 1999, 50% of 3/4.")
    assert text == (
        "I paid six dollars and twenty-four cents at one thirty p.m. in "
        "nineteen ninety-nine, fifty percent of three fourths."
    )
