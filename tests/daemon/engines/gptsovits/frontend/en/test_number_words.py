"""Expected strings were produced by inflect 7.6 (upstream's library) with the same
arguments upstream passes (andword="" for cardinals, group=2/zero="oh" for years)."""

from __future__ import annotations

import pytest

from daemon.engines.gptsovits.frontend.en import number_words as words


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "zero"),
        (21, "twenty-one"),
        (101, "one hundred one"),
        (1234, "one thousand, two hundred thirty-four"),
        (2024, "two thousand twenty-four"),
        (2100, "two thousand, one hundred"),
        (100001, "one hundred thousand one"),
        (1000100, "one million, one hundred"),
        (1010010, "one million, ten thousand ten"),
        (1000000000001, "one trillion one"),
    ],
)
def test_cardinal(n: int, text: str) -> None:
    assert words.cardinal(n) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (1001, "ten oh one"),
        (1905, "nineteen oh five"),
        (1999, "nineteen ninety-nine"),
        (2000, "two thousand"),
        (2005, "two thousand five"),
        (2024, "twenty twenty-four"),
        (1900, "nineteen hundred"),
        (999, "nine hundred ninety-nine"),
        (3000, "three thousand"),
    ],
)
def test_spoken_integer_reads_years_in_pairs(n: int, text: str) -> None:
    assert words.spoken_integer(n) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (1, "first"),
        (22, "twenty-second"),
        (101, "one hundred and first"),
        (12, "twelfth"),
        (100, "one hundredth"),
        (30, "thirtieth"),
    ],
)
def test_ordinal(n: int, text: str) -> None:
    assert words.ordinal(n) == text
