"""The GPT-SoVITS build's clear errors: a missing input is named, and every
input is checked before any work."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from scripts.gptsovits import build
from scripts.gptsovits.export import aihub
from scripts.gptsovits.synthetic.voice import voice_at


def _argv(src: Path, tmp_path: Path, *extra: str) -> list[str]:
    voice = voice_at(src)
    return [
        str(voice.logs_dir),
        "--gpt-epoch",
        "2",
        "--sovits-epoch",
        "2",
        "--ref",
        voice.ref_clip,
        "--target",
        "simulator",
        "--out",
        str(tmp_path / "out"),
        "--bert",
        str(voice.bert_dir),
        "--g2pw",
        str(voice.g2pw_dir),
        "--shapes",
        "tiny",
        *extra,
    ]


def test_missing_training_file_is_named(
    source_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    voice = voice_at(source_copy)
    missing = voice.logs_dir / "7-sv_cn" / f"{voice.ref_clip}.pt"
    missing.unlink()
    assert build.main(_argv(source_copy, tmp_path)) == 1
    err = capsys.readouterr().err
    assert f"missing {missing}" in err
    assert not (tmp_path / "out.work").exists()  # stopped before any work


def test_missing_checkpoint_is_named(
    source_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = _argv(source_copy, tmp_path)
    argv[argv.index("--gpt-epoch") + 1] = "7"
    assert build.main(argv) == 1
    assert "no GPT checkpoint for epoch 7" in capsys.readouterr().err


def test_aihub_without_client_is_a_clear_error(
    source_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    try:
        import qai_hub  # noqa: F401

        pytest.skip("qai-hub is installed here")
    except ImportError:
        pass
    argv = _argv(source_copy, tmp_path, "--compiler", "aihub")
    argv[argv.index("--target") + 1] = "qcs8550"
    assert build.main(argv) == 1
    assert "pip install qai-hub" in capsys.readouterr().err


def test_aihub_without_credentials_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only our credential check runs: the client module is never called."""
    monkeypatch.setitem(sys.modules, "qai_hub", types.ModuleType("qai_hub"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(aihub.TOKEN_ENV, raising=False)
    with pytest.raises(aihub.AiHubUnavailable, match="qai-hub configure"):
        aihub.check_available("qcs8550")
    with pytest.raises(aihub.AiHubUnavailable, match="real device"):
        aihub.check_available("simulator")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (
            ["--sv", "sv.ckpt"],
            "--sv makes the zero-shot graphs, which also need --hubert",
        ),
        (["--hubert", "."], "--hubert .: missing config.json"),
        (
            ["--hubert", "{hubert}", "--sv", "nowhere.ckpt"],
            "--sv nowhere.ckpt: no such",
        ),
    ],
)
def test_zero_shot_inputs_are_checked_first(
    built_voice: Path, tmp_path: Path, capsys: pytest.CaptureFixture, extra, words
) -> None:
    hubert = tmp_path / "hubert"
    hubert.mkdir()
    (hubert / "config.json").write_text("{}")
    argv = _argv(built_voice / "source", tmp_path)
    argv += [x.format(hubert=hubert) for x in extra]
    assert build.main(argv) == 1
    assert words in capsys.readouterr().err
    assert not (tmp_path / "out.work").exists()  # stopped before any work


def test_an_overlap_below_the_vocoders_reach_is_refused_first(
    built_voice: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The overlap is checked against the generator's
    receptive radius (from its config) before any export, with the numbers."""
    import dataclasses

    from scripts.gptsovits import shapes as shapes_mod

    narrow = dataclasses.replace(shapes_mod.TINY, gen_overlap=2)
    monkeypatch.setitem(build.SHAPES, "tiny", narrow)
    assert build.main(_argv(built_voice / "source", tmp_path)) == 1
    err = capsys.readouterr().err
    assert "vits_gen: window overlap 2 frames is less than the vocoder's" in err
    assert "use overlap >=" in err
    assert not (tmp_path / "out.work").exists()  # stopped before any work
