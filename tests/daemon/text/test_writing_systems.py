"""Text a voice cannot read: refused with the voice's languages, or skipped with a
warning; every engine's frontend declares what it reads (daemon.text.writing_systems).

The service side (HTTP 400, Wyoming error, ``say`` exit 1, still serving) runs in
tests/test_readme.py on the demo voice.
"""

from __future__ import annotations

import logging

import pytest

from daemon.engines.gptsovits.frontend.phonemizer import TextFrontend
from daemon.engines.piper.params import PiperParams
from daemon.engines.piper.text import PiperText, coverage
from daemon.text.writing_systems import (
    Coverage,
    UnspeakableText,
    language_scripts,
    script_of,
)
from tests.daemon.engines.piper.test_text import _params

ENGLISH = Coverage.of_languages(["en-us"])
assert ENGLISH is not None


@pytest.mark.parametrize(
    ("char", "script"),
    [("a", "Latin"), ("é", "Latin"), ("Ａ", "Latin"), ("你", "Han"), ("丽", "Han"),
     ("あ", "Hiragana"), ("ア", "Katakana"), ("ｱ", "Katakana"), ("한", "Hangul"),
     ("Ж", "Cyrillic"), ("Ω", "Greek"), ("ש", "Hebrew"), ("م", "Arabic"),
     ("ก", "Thai"), ("1", None), ("，", None), ("😀", None), ("ˈ", None)],
)  # fmt: skip
def test_script_of_a_character(char: str, script: str | None):
    assert script_of(char) == script


def test_language_tags_map_to_scripts():
    assert language_scripts("en_US") == language_scripts("en-us") == {"Latin"}
    assert language_scripts("cmn") == {"Han"}
    assert language_scripts("ja") == {"Han", "Hiragana", "Katakana"}
    assert language_scripts("xx-yy") is None
    # One unknown language: nothing is checked rather than something refused.
    assert Coverage.of_languages(["en", "xx"]) is None
    assert Coverage.of_languages([]) is None


def test_text_with_nothing_readable_is_refused_naming_the_languages():
    with pytest.raises(UnspeakableText) as err:
        ENGLISH.speakable("你好，世界。")
    assert str(err.value) == (
        "this voice cannot read Han text '你好 世界': it speaks en-us (Latin script)"
    )
    with pytest.raises(UnspeakableText, match="Cyrillic text 'Привет мир'"):
        ENGLISH.speakable("Привет мир!")
    assert isinstance(err.value, ValueError)  # the service answers 400 for it


def test_a_part_it_cannot_read_is_skipped_with_one_warning(caplog):
    with caplog.at_level(logging.WARNING, "daemon.text.writing_systems"):
        assert ENGLISH.speakable("Hello 你好 world.") == "Hello   world."
        assert ENGLISH.speakable("Call 911, Мир!") == "Call 911,  !"
    assert [r.getMessage() for r in caplog.records] == [
        "skipped Han text '你好': this voice speaks en-us (Latin script)",
        "skipped Cyrillic text 'Мир': this voice speaks en-us (Latin script)",
    ]


def test_readable_text_passes_unchanged(caplog):
    for text in ("Hello, world.", "Café ＡＢＣ, 42!", "...", "😀", " "):
        assert ENGLISH.speakable(text) is text
    assert caplog.records == []


def test_piper_espeak_voice_reads_its_language_and_latin():
    joe = coverage(_params(phoneme_type="espeak", espeak_voice="cmn"))
    assert joe is not None and joe.scripts == {"Han", "Latin"}
    assert joe.speakable("我用iPhone") == "我用iPhone"  # espeak-ng: ˈaɪ fˈəʊn


def test_piper_text_skips_or_refuses_what_its_id_map_cannot_read():
    text = PiperText(_params(), max_ids=64)  # "text" voice: a-z in its id map
    assert isinstance(text.coverage, Coverage) and text.coverage.scripts == {"Latin"}
    assert [p.phonemes for p in text.pieces("hi 你好")] == ["hi"]
    with pytest.raises(UnspeakableText, match="it speaks en-us"):
        text.pieces("你好，世界。")


def test_piper_unknown_language_is_not_checked():
    params: PiperParams = _params(phoneme_type="espeak", espeak_voice="qya")
    assert coverage(params) is None


def test_gpt_sovits_frontend_reads_chinese_english_and_its_greek_names():
    frontend = TextFrontend()
    with pytest.raises(UnspeakableText, match=r"it speaks zh, en \(Han, Latin"):
        frontend.split("Привет мир.")
    with pytest.raises(UnspeakableText, match="Hiragana text"):
        frontend.split("こんにちは")
    assert [s.text for s in frontend.split("角度α是30度")] == ["角度α是30度。"]
    assert [s.text for s in frontend.split("你好 Привет")] == ["你好。"]
