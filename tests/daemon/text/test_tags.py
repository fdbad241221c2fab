"""Language tags: a code or upstream's name in any case matches a declaration."""

from __future__ import annotations

import pytest

from daemon.text.tags import as_code, described, speaks

DECLARED = ("zh", "en_US", "fil")


@pytest.mark.parametrize(
    "asked",
    ["en_US", "en", "en_GB", "en-GB", "EN", "English", "english", " eNGLISH ",
     "Chinese", "zh", "tl", "Filipino"],
)  # fmt: skip
def test_codes_and_names_in_any_case_match(asked: str) -> None:
    assert speaks(DECLARED, asked)


@pytest.mark.parametrize("asked", ["de", "German", "Klingon", "", "en US"])
def test_others_do_not(asked: str) -> None:
    assert not speaks(DECLARED, asked)


def test_a_declared_spelling_matches_as_it_is() -> None:
    assert speaks(("auto", "english"), "auto") and speaks(("xx",), "xx")


def test_as_code() -> None:
    asked = ("English", " chinese", "en-GB", "EN", "tl_PH", "Klingon")
    assert [as_code(x) for x in asked] == [
        "en",
        "zh",
        "en_GB",
        "en",
        "fil_PH",
        "Klingon",
    ]


def test_a_refusal_lists_codes_and_names() -> None:
    assert described(DECLARED) == (
        "one of ['zh', 'en_US', 'fil'] (or the name, any case: "
        "['Chinese', 'English', 'Filipino'])"
    )
    assert described(("xx",)) == "one of ['xx']"  # no name known
