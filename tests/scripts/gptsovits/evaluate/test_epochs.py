"""Finding an experiment's SoVITS epochs and loading one."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.gptsovits.evaluate.epochs import EpochError, find_epochs, load_epoch
from tests.scripts.gptsovits.evaluate.two_epochs import (
    FIRST_EPOCH,
    SECOND_EPOCH,
    copy_voice,
)


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def test_every_epoch_by_number(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "v"
    logs.mkdir(parents=True)
    for name in ("v_e10_s100.pth", "v_e2_s20.pth", "v2_e3_s30.pth", "v_e2.pth"):
        _touch(tmp_path / "SoVITS_weights_v2Pro" / name)
    _touch(tmp_path / "SoVITS_weights_v2ProPlus" / "v_e5_s50.pth")
    epochs = find_epochs(logs)
    # Other experiments (v2) and names without steps are not this voice's.
    assert [(e.epoch, e.steps, e.label) for e in epochs] == [
        (2, 20, "e2"),
        (5, 50, "e5"),
        (10, 100, "e10"),
    ]


def test_two_files_of_one_epoch_keep_both(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "v"
    logs.mkdir(parents=True)
    _touch(tmp_path / "SoVITS_weights_v2Pro" / "v_e4_s40.pth")
    _touch(tmp_path / "SoVITS_weights_v2ProPlus" / "v_e4_s44.pth")
    assert [e.label for e in find_epochs(logs)] == ["e4_s40", "e4_s44"]


def test_no_epoch_says_where_it_looked(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "v"
    logs.mkdir(parents=True)
    with pytest.raises(EpochError) as info:
        find_epochs(logs)
    assert str(tmp_path / "SoVITS_weights_v2Pro" / "v_e*_s*.pth") in str(info.value)


def test_load_epoch(eval_voice_root, tmp_path: Path) -> None:
    voice = copy_voice(eval_voice_root, tmp_path)
    epochs = find_epochs(voice.logs_dir)
    assert [e.epoch for e in epochs] == [FIRST_EPOCH, SECOND_EPOCH]
    model = load_epoch(epochs[0])
    assert model.dims.sample_rate == 32000 and not model.training
    epochs[1].path.write_bytes(epochs[1].path.read_bytes()[:1000])  # truncated
    with pytest.raises(EpochError, match=f"epoch e{SECOND_EPOCH}: .*truncated"):
        load_epoch(epochs[1])
