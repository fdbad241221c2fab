"""Helpers of the eval_voice tests: the synthetic voice's SoVITS side with a
second epoch and a breath in its first clip, copies to break, and main() run
in-process (fixtures: conftest.py)."""

from __future__ import annotations

import contextlib
import io
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from scripts.gptsovits.evaluate import eval_voice
from scripts.gptsovits.models.checkpoints import save_sovits_checkpoint
from scripts.gptsovits.synthetic.voice import (
    SAMPLE_RATE,
    TINY_SV,
    SyntheticVoice,
    clip_name,
    random_sovits,
    tiny_sovits_hparams,
    write_training_folder,
)

# write_test_voice's defaults (sovits_epoch, sovits_steps), and the second epoch.
FIRST_EPOCH, FIRST_STEPS = 2, 16
SECOND_EPOCH, SECOND_STEPS, SECOND_SEED = 4, 32, 7
# 0.8 s of noise at -36.5 dBFS inside clip 0 (4 s): quiet, unvoiced = a breath.
BREATH_START_S, BREATH_END_S, BREATH_RMS = 1.5, 2.3, 0.015


def add_epoch(voice: SyntheticVoice, epoch: int, steps: int, seed: int) -> Path:
    """Another SoVITS epoch of the voice's experiment (random weights)."""
    hps = tiny_sovits_hparams(voice.exp)
    path = voice.sovits_pth.parent / f"{voice.exp}_e{epoch}_s{steps}.pth"
    model = random_sovits(hps, seed)
    save_sovits_checkpoint(path, model.state_dict(), hps, f"{epoch}epoch", "v2Pro")
    return path


def add_breath(voice: SyntheticVoice, index: int = 0) -> Path:
    """Overwrite part of a clip with breath-like noise; its length (and so its
    semantic tokens) stays."""
    path = voice.logs_dir / "5-wav32k" / clip_name(voice.exp, index)
    audio, sr = sf.read(path, dtype="float32")
    a, b = int(BREATH_START_S * sr), int(BREATH_END_S * sr)
    audio[a:b] = BREATH_RMS * np.random.default_rng(3).standard_normal(b - a)
    sf.write(path, audio, SAMPLE_RATE, subtype="PCM_16")
    return path


def write_sovits_side(
    root: Path, exp: str = "tinyvoice", seed: int = 0
) -> SyntheticVoice:
    """The synthetic voice's SoVITS epoch and training folder exactly as
    write_test_voice(root, exp, seed) writes them, without the tiny BERT and
    g2pW (eval_voice reads neither; 3-bert/ gets random features instead), which
    saves most of its time. The GPT/BERT/g2pW paths are left unwritten."""
    hps = tiny_sovits_hparams(exp)
    d = root / "SoVITS_weights_v2Pro"
    d.mkdir(parents=True)
    path = d / f"{exp}_e{FIRST_EPOCH}_s{FIRST_STEPS}.pth"
    weights = random_sovits(hps, seed + 1).state_dict()  # write_test_voice's seed
    save_sovits_checkpoint(path, weights, hps, f"{FIRST_EPOCH}epoch", "v2Pro")
    logs = root / "logs" / exp
    write_training_folder(logs, np.random.default_rng(seed), TINY_SV)
    missing = root / "not-written"
    return SyntheticVoice(
        root, exp, missing, path, logs, 0, FIRST_EPOCH, missing, missing
    )


def copy_voice(voice: SyntheticVoice, dest: Path) -> SyntheticVoice:
    """A copy of the voice's weights and training folder to break freely."""
    shutil.copytree(voice.sovits_pth.parent, dest / voice.sovits_pth.parent.name)
    shutil.copytree(voice.logs_dir, dest / "logs" / voice.exp)
    return SyntheticVoice(
        dest,
        voice.exp,
        voice.gpt_ckpt,
        dest / voice.sovits_pth.parent.name / voice.sovits_pth.name,
        dest / "logs" / voice.exp,
        voice.gpt_epoch,
        voice.sovits_epoch,
        voice.bert_dir,
        voice.g2pw_dir,
    )


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str


def run_main(*argv: str | Path) -> Run:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = eval_voice.main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return Run(code, out.getvalue(), err.getvalue())
