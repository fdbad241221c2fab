"""Session fixtures: the two-epoch synthetic voice and one evaluation of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from scripts.gptsovits.synthetic.voice import SyntheticVoice
from tests.scripts.gptsovits.evaluate.two_epochs import (
    SECOND_EPOCH,
    SECOND_SEED,
    SECOND_STEPS,
    Run,
    add_breath,
    add_epoch,
    run_main,
    write_sovits_side,
)


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """The tiny models gain nothing from intra-op threads, and on a busy
    2-core machine two spinning threads made a 1 s decode take 10 s instead
    of 0.35 s (measured). Restored after each module."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def eval_voice_root(tmp_path_factory: pytest.TempPathFactory) -> SyntheticVoice:
    voice = write_sovits_side(tmp_path_factory.mktemp("eval_voice"))
    add_epoch(voice, SECOND_EPOCH, SECOND_STEPS, SECOND_SEED)
    add_breath(voice)
    return voice


@pytest.fixture(scope="module")
def evaluated(
    eval_voice_root: SyntheticVoice, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Run, Path]:
    """One evaluation of both epochs on the first clip (the one with a breath)."""
    out = tmp_path_factory.mktemp("eval_voice_out")
    return run_main(eval_voice_root.logs_dir, "--clips", "1", "--out", out), out
