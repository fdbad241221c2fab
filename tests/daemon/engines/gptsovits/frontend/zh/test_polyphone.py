from __future__ import annotations

from collections.abc import Sequence

import pytest

from daemon.engines.gptsovits.frontend import TextFrontend
from daemon.engines.gptsovits.frontend.zh.polyphone import (
    correct_pronunciation,
    pypinyin_readings,
)
from daemon.sdk.cancel import CancelToken


def test_pypinyin_readings_one_per_char() -> None:
    assert pypinyin_readings("你好,世界.") == ["ni3", "hao3", ",", "shi4", "jie4", "."]
    assert pypinyin_readings("好!?") == ["hao3", "!", "?"]  # a non-Han run is spread


def test_dictionary_word_overrides_readings() -> None:
    # polyphonic-fix.rep: 银行 -> yin2 hang2, whatever the model said.
    assert correct_pronunciation("银行", ["yin2", "xing2"]) == ["yin2", "hang2"]
    assert correct_pronunciation("你好", ["ni3", "hao3"]) == ["ni3", "hao3"]


class FixedResolver:
    """A PolyphoneResolver reading every 长 as chang2, no opinion otherwise."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def resolve(
        self, sentences: Sequence[str], cancel: CancelToken | None = None
    ) -> list[list[str | None]]:
        self.seen.extend(sentences)
        return [["chang2" if c == "长" else None for c in s] for s in sentences]


def test_resolver_choice_is_used_and_none_keeps_pypinyin() -> None:
    resolver = FixedResolver()
    fe = TextFrontend(resolver=resolver)
    got = fe.phonemize("河很长。")
    assert resolver.seen == ["河很长."]
    assert got.phones == ("h", "e2", "h", "en3", "ch", "ang2", ".")
    # pypinyin alone says zhang3, and the 3-3 tone pair then turns 很 into hen2.
    plain = TextFrontend().phonemize("河很长。")
    assert plain.phones == ("h", "e2", "h", "en2", "zh", "ang3", ".")


class ShortResolver:
    def resolve(
        self, sentences: Sequence[str], cancel: CancelToken | None = None
    ) -> list[list[str | None]]:
        return [[None] for _ in sentences]


def test_misaligned_resolver_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="misaligned"):
        TextFrontend(resolver=ShortResolver()).phonemize("头发很长。")
