"""scripts/eval-gptsovits on the synthetic voice with two epochs: the table, the
recommendation, the files, the progress lines, and each error's exit code."""

from __future__ import annotations

import csv
import struct
import subprocess
from pathlib import Path

import pytest
import torch

from scripts.gptsovits.evaluate import eval_voice, plots
from scripts.gptsovits.evaluate.report import RECORDING, Scores, recommend
from tests.scripts.gptsovits.evaluate.two_epochs import Run, copy_voice, run_main

REPO = Path(__file__).resolve().parents[4]


def _rows(run: Run) -> dict[str, list[str]]:
    """First column -> the other columns of the printed table."""
    rows = {}
    for line in run.stdout.splitlines()[1:]:
        if line.startswith(("recommended", "wrote")):
            break
        parts = line.split()
        rows[parts[0]] = parts[1:]
    return rows


def _csv(out: Path) -> list[Scores]:
    with open(out / "scores.csv", encoding="utf-8") as f:
        return [
            Scores(
                r["label"],
                int(r["epoch"]) if r["epoch"] else None,
                float(r["tonality"]),
                int(r["tonal_clips"]),
                int(r["breath_clips"]),
                float(r["whine"]),
                float(r["log_mel"]),
                float(r["seconds"]),
            )
            for r in csv.DictReader(f)
        ]


def test_table_has_the_recordings_and_every_epoch(evaluated) -> None:
    run, _ = evaluated
    assert run.code == eval_voice.EXIT_OK, run.stderr
    rows = _rows(run)
    assert list(rows) == [RECORDING, "e2", "e4"]
    # The breath in clip 0 was found, so tonality is a number for every row.
    for cells in rows.values():
        float(cells[0])
        assert cells[1].endswith("/1")
    assert float(rows[RECORDING][3]) == 0.0  # distance of a recording to itself
    assert all(float(rows[e][3]) > 0 for e in ("e2", "e4"))


def test_recommendation_follows_the_rule(evaluated) -> None:
    run, out = evaluated
    scores = _csv(out)
    assert scores[0].label == RECORDING
    best = recommend(scores[1:])
    assert f"recommended epoch: {best.label}\n" in run.stdout
    assert "  (vetoed by breath tonality > best + 3: " in run.stdout
    assert [r for r, c in _rows(run).items() if "<-" in c] == [best.label]


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_one_png_per_metric(evaluated) -> None:
    run, out = evaluated
    for _, stem, _ in plots.METRICS:
        path = out / f"{stem}.png"
        assert f"wrote {path}" in run.stdout
        w, h = plots.FIGSIZE
        assert _png_size(path) == (int(w * plots.DPI), int(h * plots.DPI))


def test_progress_lines(evaluated) -> None:
    err = evaluated[0].stderr
    assert "2 SoVITS epoch(s): e2 e4" in err
    assert "1 clip(s), 1 breath window(s)" in err
    assert "[1/2] e2:" in err and "e4: clip 1/1" in err
    assert "[2/2] e4 done in" in err


def test_unreadable_checkpoint_is_named_and_the_rest_evaluated(
    eval_voice_root, tmp_path: Path
) -> None:
    voice = copy_voice(eval_voice_root, tmp_path)
    (voice.sovits_pth.parent / f"{voice.exp}_e4_s32.pth").unlink()  # one is enough
    bad = voice.sovits_pth.parent / f"{voice.exp}_e9_s99.pth"
    bad.write_bytes(b"PK\x03\x04 not a checkpoint")
    run = run_main(voice.logs_dir, "--clips", "1", "--out", tmp_path / "out")
    assert run.code == eval_voice.EXIT_PARTIAL
    assert list(_rows(run)) == [RECORDING, "e2"]
    assert "recommended epoch: e2\n" in run.stdout
    assert "epoch e9: " in run.stderr and str(bad) in run.stderr
    assert "1 epoch(s) failed" in run.stderr


def test_only_unreadable_checkpoints(eval_voice_root, tmp_path: Path) -> None:
    voice = copy_voice(eval_voice_root, tmp_path)
    for path in voice.sovits_pth.parent.iterdir():
        path.write_bytes(b"")
    run = run_main(voice.logs_dir, "--clips", "1", "--out", tmp_path / "out")
    assert run.code == eval_voice.EXIT_ERROR
    assert "no epoch could be evaluated (2 failed)" in run.stderr
    assert not (tmp_path / "out").exists()


def test_clips_that_fit_no_epoch(eval_voice_root, tmp_path: Path) -> None:
    voice = copy_voice(eval_voice_root, tmp_path)
    for sv in (voice.logs_dir / "7-sv_cn").iterdir():
        torch.save(torch.zeros(1, 7), sv)  # the models expect 160
    run = run_main(voice.logs_dir, "--clips", "1", "--out", tmp_path / "out")
    assert run.code == eval_voice.EXIT_ERROR
    assert "epoch e2: clip tinyvoice_0000.wav: 7-sv_cn embedding width 7" in run.stderr
    assert "no epoch could be evaluated (2 failed)" in run.stderr


@pytest.mark.parametrize(
    "breakage, message",
    [
        ("weights", "no SoVITS epoch of experiment 'tinyvoice'; searched"),
        ("6-name2semantic.tsv", "missing {logs}/6-name2semantic.tsv"),
        ("2-name2text.txt", "missing {logs}/2-name2text.txt"),
        ("7-sv_cn/tinyvoice_0000.wav.pt", "missing {logs}/7-sv_cn/tinyvoice_0000"),
        ("folder", "training folder {logs} does not exist"),
    ],
)
def test_missing_inputs_are_named(
    eval_voice_root, tmp_path: Path, breakage: str, message: str
) -> None:
    voice = copy_voice(eval_voice_root, tmp_path)
    logs = voice.logs_dir
    if breakage == "weights":
        for path in voice.sovits_pth.parent.iterdir():
            path.unlink()
    elif breakage == "folder":
        logs = tmp_path / "logs" / "nothing"
    else:
        (logs / breakage).unlink()
    run = run_main(logs, "--out", tmp_path / "out")
    assert run.code == eval_voice.EXIT_ERROR
    assert message.format(logs=logs) in run.stderr
    assert run.stdout == ""


def test_bad_arguments(eval_voice_root) -> None:
    run = run_main(eval_voice_root.logs_dir, "--clips", "0")
    assert run.code == eval_voice.EXIT_USAGE
    assert "--clips must be at least 1" in run.stderr


def test_wrapper_runs_the_module() -> None:
    """Both answers come before torch is imported, so this stays quick."""
    script = REPO / "scripts" / "eval_voice"
    shown = subprocess.run(
        [script, "--help"], capture_output=True, text=True, check=True
    )
    assert "usage: scripts/eval-gptsovits" in shown.stdout
    assert "Exit codes:" in shown.stdout
    bad = subprocess.run([script, "logs/x", "--clips", "0"], capture_output=True)
    assert bad.returncode == eval_voice.EXIT_USAGE
