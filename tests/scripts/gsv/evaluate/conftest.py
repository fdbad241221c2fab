"""Session fixtures: the two-epoch synthetic voice and one evaluation of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.gsv.synthetic.voice import SyntheticVoice
from tests.scripts.gsv.evaluate.two_epochs import (
    SECOND_EPOCH,
    SECOND_SEED,
    SECOND_STEPS,
    Run,
    add_breath,
    add_epoch,
    run_main,
    write_sovits_side,
)


@pytest.fixture(scope="session")
def eval_voice_root(tmp_path_factory: pytest.TempPathFactory) -> SyntheticVoice:
    voice = write_sovits_side(tmp_path_factory.mktemp("eval_voice"))
    add_epoch(voice, SECOND_EPOCH, SECOND_STEPS, SECOND_SEED)
    add_breath(voice)
    return voice


@pytest.fixture(scope="session")
def evaluated(
    eval_voice_root: SyntheticVoice, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Run, Path]:
    """One evaluation of both epochs on the first clip (the one with a breath)."""
    out = tmp_path_factory.mktemp("eval_voice_out")
    return run_main(eval_voice_root.logs_dir, "--clips", "1", "--out", out), out
