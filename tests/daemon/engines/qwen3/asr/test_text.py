"""Streamed detokenisation (UTF-8 holdback) with the tiny checkpoint's
tokenizer, and the final parse against upstream's parse_asr_output."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from daemon.engines.qwen3.asr.text import (
    TextStream,
    fix_repetitions,
    parse,
    partial_text,
)

utils = pytest.importorskip("qwen_asr.inference.utils")

CHINESE = "今天天气很好，我们去公园散步吧。你好，请问现在几点了？"
MIXED = "language Chinese<asr_text>请把客厅的灯打开 and the kitchen lights, 谢谢。"


@pytest.fixture(scope="module")
def tokenizer(tiny_asr_model: Path) -> Tokenizer:
    return Tokenizer.from_file(str(tiny_asr_model / "tokenizer.json"))


def _stream(tok: Tokenizer, ids: list[int]) -> tuple[list[str], TextStream]:
    stream = TextStream(tok)
    pieces = [stream.push(i) for i in ids]
    pieces.append(stream.flush())
    return pieces, stream


@pytest.mark.parametrize("text", [CHINESE, MIXED])
def test_pieces_join_to_the_whole_decode(tokenizer: Tokenizer, text: str) -> None:
    ids = tokenizer.encode(text).ids
    pieces, stream = _stream(tokenizer, ids)
    assert "".join(pieces) == stream.text == tokenizer.decode(ids) == text
    assert not any("\ufffd" in p for p in pieces)


def test_a_piece_ending_inside_a_character_is_held_back(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode(CHINESE).ids
    # a tiny byte-level BPE splits Chinese characters across tokens
    partial = [
        i for i in range(1, len(ids)) if tokenizer.decode(ids[:i]).endswith("\ufffd")
    ]
    assert partial, "the tiny tokenizer should split some character"
    pieces, _ = _stream(tokenizer, ids)
    held = [i for i in partial if pieces[i - 1] == ""]
    assert held == partial


def test_random_ids_stream_as_decode(tokenizer: Tokenizer) -> None:
    """Any id sequence (a random model's output): pieces join to the decode
    with special tokens skipped, and nothing joined is ever taken back."""
    rng = random.Random(0)
    vocab = tokenizer.get_vocab_size()
    for _ in range(20):
        ids = [rng.randrange(vocab) for _ in range(rng.randint(1, 60))]
        pieces, stream = _stream(tokenizer, ids)
        assert "".join(pieces) == tokenizer.decode(ids, skip_special_tokens=True)


def test_partials_only_grow() -> None:
    raw = "language English<asr_text> hello world"
    seen = [partial_text(raw[:i], forced=False) for i in range(len(raw) + 1)]
    assert all(b.startswith(a) for a, b in zip(seen, seen[1:]))
    assert seen[-1] == "hello world"
    assert partial_text("language Eng", forced=False) == ""
    assert partial_text("  hi", forced=True) == "hi"


CASES = [
    "language English<asr_text>hello",
    "language None<asr_text>",
    "language None<asr_text> still text ",
    "x\nlanguage chinese\n<asr_text> 你好 ",
    "no tag here",
    "   ",
    "",
    "foo\nbar<asr_text>t",
    "language English<asr_text>" + "ha" * 30 + " end",
    "language English<asr_text>" + "a" * 25 + "b" * 20 + "c" * 21,
    "language English<asr_text>" + "你好，" * 40,
]


def _random_cases(n: int) -> list[str]:
    rng = random.Random(1)
    alpha = "ab c哈。"
    out = []
    for _ in range(n):

        def word(k: int) -> str:
            return "".join(rng.choice(alpha) for _ in range(rng.randint(0, k)))

        s = word(20) + word(6).strip() * rng.randint(0, 45) + word(20)
        if rng.random() < 0.5:
            head = "language " + rng.choice(["English", "chinese", "None", ""])
            s = head + rng.choice(["<asr_text>", "\n<asr_text>", ""]) + s
        out.append(s)
    return out


@pytest.mark.parametrize("forced", [None, "English"])
def test_parse_equals_upstream(forced: str | None) -> None:
    for raw in CASES + _random_cases(400):
        got = parse(raw, forced)
        assert (got.language, got.text) == utils.parse_asr_output(raw, forced), raw
        assert fix_repetitions(raw) == utils.detect_and_fix_repetitions(raw), raw
