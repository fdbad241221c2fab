"""The tiny model, written once per session: two seeds (so tests can tell
models apart) and one speaker clip. Upstream reads its hub location when
huggingface_hub is imported, so every upstream call runs in a subprocess
(oracle.run.infer_int16_subprocess) with that model's HF_HOME."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from hexvoice_indextts.build.tiny import TinyDirs, write_tiny
from hexvoice_indextts.oracle.run import infer_int16_runs, write_clip

#: The seeds of the two tiny models.
SEED: int = 0
OTHER_SEED: int = 1


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyDirs:
    return write_tiny(tmp_path_factory.mktemp("tiny"), seed=SEED)


@pytest.fixture(scope="session")
def tiny_other(tmp_path_factory: pytest.TempPathFactory) -> TinyDirs:
    return write_tiny(tmp_path_factory.mktemp("tiny-other"), seed=OTHER_SEED)


@pytest.fixture(scope="session")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_clip(tmp_path_factory.mktemp("clip") / "speaker.wav")


@dataclass(frozen=True)
class FirstRun:
    """Upstream's infer on the tiny model (seed SEED), twice after one load, and
    the config keys it read while loading."""

    rate: int
    wav: np.ndarray
    again: np.ndarray
    config_reads: frozenset[str]


@pytest.fixture(scope="session")
def first_run(tiny: TinyDirs, clip: Path, tmp_path_factory) -> FirstRun:
    reads = tmp_path_factory.mktemp("reads") / "reads.json"
    rate, (wav, again) = infer_int16_runs(
        tiny.model, tiny.hf_home, clip, seed=SEED, repeat=2, config_reads=reads
    )
    return FirstRun(rate, wav, again, frozenset(json.loads(reads.read_text())))
