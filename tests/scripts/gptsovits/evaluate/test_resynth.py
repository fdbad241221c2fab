"""Resynthesis: upstream's length, the same noise for every epoch, and clips
that do not fit a model refused."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from scripts.gptsovits.evaluate.clips import load_clips
from scripts.gptsovits.evaluate.epochs import find_epochs, load_epoch
from scripts.gptsovits.evaluate.resynth import check_clips, resynthesise
from scripts.gptsovits.shapes import FRAMES_PER_TOKEN, HOP_LENGTH

SHORT_TOKENS = 25  # 1 s at 25 Hz


@pytest.fixture(scope="module")
def setup(eval_voice_root):
    logs = eval_voice_root.logs_dir
    (clip,) = load_clips(logs, 1)
    return clip, [load_epoch(e) for e in find_epochs(logs)]


def test_length_and_determinism(setup) -> None:
    clip, (first, second) = setup
    # Decoded at full length, the clip is within one token (2 latent frames) of
    # its recording: time-aligned for the metrics.
    samples_per_token = FRAMES_PER_TOKEN * HOP_LENGTH
    assert abs(len(clip.tokens) * samples_per_token - len(clip.audio)) <= (
        samples_per_token
    )
    # Decoding on a 1 s piece of the clip, which is faster.
    short = dataclasses.replace(clip, tokens=clip.tokens[:SHORT_TOKENS])
    audio = resynthesise(first, short, seed=0)
    assert audio.dtype == np.float32
    assert len(audio) == SHORT_TOKENS * samples_per_token
    np.testing.assert_array_equal(audio, resynthesise(first, short, seed=0))
    assert not np.array_equal(audio, resynthesise(first, short, seed=1))
    assert not np.allclose(audio, resynthesise(second, short, seed=0))


def test_clips_that_do_not_fit_are_refused(setup) -> None:
    clip, (model, _) = setup
    check_clips(model, [clip])
    wide = dataclasses.replace(clip, sv=torch.zeros(1, model.dims.sv + 1))
    with pytest.raises(ValueError, match="7-sv_cn embedding width"):
        check_clips(model, [wide])
    big = dataclasses.replace(clip, tokens=clip.tokens + model.dims.codebook)
    with pytest.raises(ValueError, match="outside the model's 1024-entry codebook"):
        check_clips(model, [big])
