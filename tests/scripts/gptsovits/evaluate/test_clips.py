"""Reading the training clips, and each bad input's message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from daemon.engines.gptsovits.frontend.symbols import phones_to_ids
from scripts.gptsovits.evaluate.clips import clip_names, load_clips
from scripts.gptsovits.pipeline.sources import TrainingFolderError
from scripts.gptsovits.synthetic.voice import CLIP_SECONDS, CLIP_TEXTS, clip_name
from tests.scripts.gptsovits.evaluate.two_epochs import (
    BREATH_END_S,
    BREATH_START_S,
    add_breath,
    copy_voice,
)


def test_clips_come_with_tokens_phones_and_breaths(eval_voice_root) -> None:
    logs = eval_voice_root.logs_dir
    assert clip_names(logs) == [clip_name("tinyvoice", i) for i in range(3)]
    # Only clip 0 has a breath: it, then the first clip without one.
    clip, filler = load_clips(logs, 2)
    assert filler.name == clip_name("tinyvoice", 1) and filler.breaths == []
    assert clip.seconds == CLIP_SECONDS[0]
    np.testing.assert_array_equal(clip.phones, phones_to_ids(CLIP_TEXTS[0][0].split()))
    line = (logs / "6-name2semantic.tsv").read_text().splitlines()[1]
    assert clip.tokens.tolist() == [int(t) for t in line.split("\t")[1].split()]
    assert clip.sv.shape == (1, 160)
    # The fixture's breath (1.5-2.3 s) is found, give or take a frame's reach.
    ((a, b),) = clip.breaths
    assert abs(a / 32000 - BREATH_START_S) < 0.1 and abs(b / 32000 - BREATH_END_S) < 0.1


def test_clips_with_a_breath_come_first(eval_voice_root, tmp_path: Path) -> None:
    voice = copy_voice(eval_voice_root, tmp_path)
    add_breath(voice, 2)  # now clips 0 and 2 have one: clip 1 is passed over
    chosen = load_clips(voice.logs_dir, 2)
    assert [c.name[-8:-4] for c in chosen] == ["0000", "0002"]
    assert all(c.breaths for c in chosen)


@pytest.fixture
def broken(eval_voice_root, tmp_path: Path) -> Path:
    return copy_voice(eval_voice_root, tmp_path).logs_dir


def test_bad_tokens_are_named(broken: Path) -> None:
    tsv = broken / "6-name2semantic.tsv"
    lines = tsv.read_text().splitlines()
    lines[1] = lines[1].split("\t")[0] + "\t1 two 3"
    tsv.write_text("\n".join(lines) + "\n")
    with pytest.raises(TrainingFolderError, match="tinyvoice_0000.wav: semantic"):
        load_clips(broken, 1)


def test_a_short_table_line_is_named(broken: Path) -> None:
    path = broken / "2-name2text.txt"
    path.write_text(path.read_text() + "lonely_name\n")
    with pytest.raises(TrainingFolderError, match=r"2-name2text.txt:4: expected"):
        load_clips(broken, 1)


def test_not_audio_is_named(broken: Path) -> None:
    wav = broken / "5-wav32k" / "tinyvoice_0000.wav"
    wav.write_bytes(b"RIFF nonsense")
    with pytest.raises(TrainingFolderError, match=f"{wav}: unreadable audio"):
        load_clips(broken, 1)


def test_unreadable_sv_is_named(broken: Path) -> None:
    sv = broken / "7-sv_cn" / "tinyvoice_0000.wav.pt"
    sv.write_bytes(b"not torch")
    with pytest.raises(TrainingFolderError, match=f"{sv}: unreadable"):
        load_clips(broken, 1)


def test_no_listed_clip(broken: Path) -> None:
    (broken / "6-name2semantic.tsv").write_text("item_name\tsemantic_audio\n")
    with pytest.raises(TrainingFolderError, match="no clip of 5-wav32k/ is listed"):
        load_clips(broken, 1)
