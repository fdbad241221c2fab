"""The text front end against upstream's own TextNormalizer and TextTokenizer
(indextts/utils/front.py) on the tiny model's BPE: the same pieces, ids and
segments. Both sides read NeMo's compiled grammars from upstream's cache
directory, so the grammars are compiled once per venv."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hexvoice_indextts.text.normalize import Normalizer, is_chinese, read_glossary
from hexvoice_indextts.text.segments import split_segments
from hexvoice_indextts.text.tokens import Tokenizer
from hexvoice_indextts.tiny.text import write_bpe

front = pytest.importorskip("indextts.utils.front")

GLOSSARY = {
    "TTS": "T T S",
    "C++": {"en": "C plus plus", "zh": "C 加加"},
    "M.2": {"zh": "M 二"},
}
#: English through every rule: numbers, money, times, contractions, tech
#: terms, glossary terms (cased differently), quotes, brackets, ellipses,
#: full-width marks, a failing-looking input, one character, whitespace.
ENGLISH = [
    "Hello world, this is a tiny voice.",
    "It's 3:30 pm on Dec. 3rd, 2026; $4.50 each...",
    "What's GPT-5-nano? It costs 12% (about 7 EUR) - that's it!",
    'I love c++ and tts on an M.2 drive: "quoted" [bracketed] ~approx~',
    "Line one\nline two…… and 1,000,000 dots,,,",
    "e-mail me at bob@example.com or call 555-0100.",
    "x",
    "  y  ",
    "",
    "Zhong1 guo2 is written with tones.",
]
CHINESE = [
    "你好世界，今天是2026年12月3日。",
    "克里斯托弗·诺兰用GPT-5-nano花了3.5元！",
    "他说：“明天见”。xuan4 ju4 que4",
    "我喜欢C++和TTS，还有M.2硬盘。",
]


@pytest.fixture(scope="module")
def bpe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bpe") / "bpe.model"
    write_bpe(path)
    return path


def _upstream(bpe: Path, language: str | None):
    norm = front.TextNormalizer(enable_glossary=True, preferred_language=language)
    norm.load_glossary(GLOSSARY)
    return front.TextTokenizer(str(bpe), norm)


def _ours(bpe: Path, language: str | None) -> Tokenizer:
    cache = Path(front.__file__).parent / "nemo_cache"
    return Tokenizer(bpe, Normalizer(cache, language, GLOSSARY))


@pytest.mark.filterwarnings("ignore:The tokens length of segment exceeds")
@pytest.mark.parametrize("language", ["en", None])
def test_pieces_ids_and_segments_are_upstreams(bpe: Path, language: str | None) -> None:
    texts = ENGLISH + (CHINESE if language is None else [])
    theirs, ours = _upstream(bpe, language), _ours(bpe, language)
    for text in texts:
        pieces = theirs.tokenize(text)
        assert ours.pieces(text) == pieces, text
        assert ours.ids(pieces) == theirs.convert_tokens_to_ids(pieces)
        for limit, quick in ((120, 0), (6, 0), (6, 4)):
            assert split_segments(pieces, limit, quick) == theirs.split_segments(
                pieces, limit, quick_streaming_tokens=quick
            ), (text, limit, quick)
    odd = ours.pieces("Ünïcödé ☃ text")
    unk = [
        p
        for p, i in zip(odd, theirs.convert_tokens_to_ids(odd), strict=True)
        if i == theirs.unk_token_id
    ]
    assert unk and ours.unknown(odd) == unk


def test_language_choice_is_upstreams() -> None:
    norm = front.TextNormalizer()
    for text in ENGLISH + CHINESE + ["1234", "a@b.cn", "beta1 voice2", "jve2 ok"]:
        assert is_chinese(text) == norm.use_chinese(text), text


@pytest.mark.filterwarnings("ignore:The tokens length of segment exceeds")
def test_segments_match_upstream_on_random_pieces() -> None:
    """Sentence ends, commas, hyphens and apostrophes at random, short limits:
    every branch of upstream's cutting and merging, its quirks included."""
    alphabet = ["▁A", "B", "▁C", ".", "▁.", "!", "?", "▁...", ",", "▁,", "-", "'", "▁'"]
    rng = random.Random(7)
    for _ in range(600):
        pieces = rng.choices(alphabet, k=rng.randint(0, 40))
        limit, quick = rng.randint(3, 12), rng.choice([0, 0, 5])
        want = front.TextTokenizer.split_segments_by_token(
            pieces, list(front.TextTokenizer.punctuation_marks_tokens), limit, quick
        )
        assert split_segments(pieces, limit, quick) == want, (pieces, limit, quick)


def test_glossary_file_is_read_and_checked(tmp_path: Path) -> None:
    good = tmp_path / "glossary.yaml"
    good.write_text(
        "TTS: T T S\nC++:\n  en: C plus plus\n  zh: C 加加\n", encoding="utf-8"
    )
    assert read_glossary(good) == {
        "TTS": "T T S",
        "C++": {"en": "C plus plus", "zh": "C 加加"},
    }
    (tmp_path / "empty.yaml").write_text("")
    assert read_glossary(tmp_path / "empty.yaml") == {}
    bad = tmp_path / "bad.yaml"
    bad.write_text("TTS: [T, T, S]\n")
    with pytest.raises(
        ValueError, match=r"bad\.yaml: \['TTS'\]: expected a string or a mapping"
    ):
        read_glossary(bad)
