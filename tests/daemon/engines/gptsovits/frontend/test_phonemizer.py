"""Golden tests against upstream GPT-SoVITS (see the note in data/golden_*.json)."""

from __future__ import annotations

import logging
import time
from collections import Counter

import numpy as np
import pytest

from daemon.engines.gptsovits.frontend import TextFrontend, spoken_length
from daemon.engines.gptsovits.frontend.zh.normalize import (
    normalize_zh,
    verbalized_sentences,
)
from tests.daemon.engines.gptsovits.frontend.golden import load_golden
from tests.daemon.engines.gptsovits.frontend.long_text import LONG_TEXT_CHARS, long_text

GOLDEN = load_golden("golden_frontend.json")
LONG = load_golden("golden_long_text.json")
# Budget (small next to a sentence's NPU time): text frontend per 30-character
# sentence, NPU calls excluded.
BUDGET_MS_PER_30_CHARS = 20.0
REQUIRED_CATEGORIES = {
    "numbers",
    "dates",
    "money",
    "phone",
    "polyphone",
    "erhua",
    "mixed",
    "punctuation",
    "emoji",
    "whitespace",
}


def _parts(phonemes) -> list[dict]:
    return [
        {
            "lang": p.lang,
            "norm_text": p.norm_text,
            "phones": list(p.phones),
            "word2ph": list(p.word2ph) if p.word2ph is not None else None,
        }
        for p in phonemes.parts
    ]


def _strip_ids(parts: list[dict]) -> list[dict]:
    return [{k: v for k, v in p.items() if k != "ids"} for p in parts]


def test_golden_set_is_broad_enough() -> None:
    counts = Counter(c["category"] for c in GOLDEN["cases"])
    assert len(GOLDEN["cases"]) >= 60
    assert REQUIRED_CATEGORIES <= set(counts)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["id"])
def test_phonemes_match_upstream(frontend: TextFrontend, case: dict) -> None:
    got = frontend.phonemize(case["text"])
    expected = case.get("hexvoice_parts", case["parts"])
    assert _parts(got) == _strip_ids(expected)
    assert got.phone_ids.tolist() == [i for p in expected for i in p["ids"]]
    if "divergence" in case:  # the documented difference must still be real
        assert _strip_ids(case["parts"]) != _parts(got)


@pytest.mark.parametrize("case", GOLDEN["normalization"], ids=lambda c: c["text"])
def test_normalization_matches_upstream(case: dict) -> None:
    assert verbalized_sentences(case["text"]) == case["sentences"]
    assert normalize_zh(case["text"]) == case["norm_text"]


def test_example_date_verbalized() -> None:
    assert verbalized_sentences("2026年9月26日") == ["二零二六年九月二十六日"]


def test_long_input_is_split_without_loss_and_matches_upstream(
    frontend: TextFrontend,
) -> None:
    text = long_text()
    assert len(text) == LONG_TEXT_CHARS
    segments = frontend.split(text)
    assert [(s.text, s.end) for s in segments] == [
        (g["text"], g["end"]) for g in LONG["segments"]
    ]
    assert all(spoken_length(s.text) <= frontend.max_len for s in segments)
    # Nothing lost: every ideograph and Latin letter of the input, in order.
    keep = lambda s: "".join(c for c in s if c.isalpha())  # noqa: E731
    assert keep("".join(s.text for s in segments)) == keep(text)
    for seg, gold in zip(segments, LONG["segments"], strict=True):
        assert " ".join(frontend.phonemize(seg.text).phones) == gold["phones"], seg.text


def test_frontend_budget_per_30_chars(frontend: TextFrontend) -> None:
    text = long_text()
    start = time.perf_counter()
    segments = frontend.split(text)
    for seg in segments:
        frontend.phonemize(seg.text)
    elapsed_ms = (time.perf_counter() - start) * 1e3
    chars = sum(spoken_length(s.text) for s in segments)
    per_30 = elapsed_ms / chars * 30
    print(
        f"text frontend: {per_30:.2f} ms per 30 spoken chars ({len(segments)} segments)"
    )
    assert per_30 <= BUDGET_MS_PER_30_CHARS


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_input_is_a_clear_error(frontend: TextFrontend, text: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        frontend.split(text)
    with pytest.raises(ValueError, match="empty"):
        frontend.phonemize(text)


def test_non_string_input_is_a_clear_error(frontend: TextFrontend) -> None:
    with pytest.raises(TypeError, match="str"):
        frontend.phonemize(b"bytes")  # type: ignore[arg-type]


def test_bert_mask_marks_chinese_phones_only(frontend: TextFrontend) -> None:
    got = frontend.phonemize("我喜欢Python。")
    langs = [p.lang for p in got.parts]
    assert langs == ["zh", "en"]
    zh, en = got.parts
    assert got.bert_mask.tolist() == [True] * len(zh.phones) + [False] * len(en.phones)
    assert sum(zh.word2ph) == len(zh.phones) and len(zh.word2ph) == len(zh.norm_text)
    assert got.phone_ids.dtype == np.int64


def test_short_text_gets_leading_period(frontend: TextFrontend) -> None:
    got = frontend.phonemize("好")
    assert got.norm_text == ".好" and got.phones == (".", "h", "ao3")


def test_special_pause_chars_become_sp_symbols(frontend: TextFrontend) -> None:
    got = frontend.phonemize("一共￥两百块，好吗")
    assert "SP2" in got.phones and "," not in got.phones


def test_fallback_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    fe = TextFrontend()
    logger = "daemon.engines.gptsovits.frontend.zh.g2p"
    with caplog.at_level(logging.INFO, logger=logger):
        fe.phonemize("银行行长来了。")
        fe.phonemize("他长大了。")
    lines = [r for r in caplog.records if "no g2pW resolver" in r.getMessage()]
    assert len(lines) == 1


def test_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="min_len"):
        TextFrontend(max_len=4, min_len=5)
