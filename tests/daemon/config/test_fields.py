"""The shared field types: their bounds and the words a refusal uses."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from daemon.config.fields import Count, Dim, Index, Positive, Sizes, Text
from daemon.config.reader import ReadError, read


@dataclass(frozen=True)
class _Sample:
    count: Count = 1
    index: Index = 0
    dim: Dim = 1
    positive: Positive = 1.0
    text: Text = "x"
    sizes: Sizes = (1,)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("count", 0, "an integer >= 1"),
        ("index", -1, "an integer >= 0"),
        ("dim", 0, "an integer > 0"),
        ("positive", 0.0, "a number > 0"),
        ("text", "", "a non-empty string"),
        ("sizes", [], "a non-empty list"),
        ("sizes", [2, 0], "an integer >= 1"),
    ],
)
def test_each_type_refuses_below_its_bound_in_its_words(field, value, words):
    with pytest.raises(ReadError, match=f"expected {words}, found"):
        read({field: value}, _Sample, where="t")


def test_the_bounds_themselves_are_accepted():
    got = read(
        {"count": 1, "index": 0, "dim": 1, "positive": 1e-9, "text": "a",
         "sizes": [3, 1]},
        _Sample,
        where="t",
    )  # fmt: skip
    assert (got.count, got.index, got.dim, got.sizes) == (1, 0, 1, (3, 1))
