from __future__ import annotations

import pytest

from daemon.engines.gptsovits.frontend.lang import split_languages


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Expected parts as upstream LangSegmenter gives them in "zh" mode.
        (
            "我买了iPhone 15，花了5999元。",
            [("zh", "我买了"), ("en", "iPhone 15，"), ("zh", "花了5999元。")],
        ),
        (
            "当时ThinkPad T60刚刚发布。",
            [("zh", "当时"), ("en", "ThinkPad T60"), ("zh", "刚刚发布。")],
        ),
        ("用 Python 写代码", [("zh", "用 "), ("en", "Python "), ("zh", "写代码")]),
        ("5G网络", [("en", "5G"), ("zh", "网络")]),
        ("你好😀世界。", [("zh", "你好"), ("en", "😀"), ("zh", "世界。")]),
        ("Hello 123 world", [("en", "Hello 123 world")]),
        ("123。", [("zh", "123。")]),
        ("第1名和第2名", [("zh", "第1名和第2名")]),
    ],
)
def test_split_languages(text: str, expected: list[tuple[str, str]]) -> None:
    assert split_languages(text) == expected
    assert "".join(part for _, part in split_languages(text)) == text
