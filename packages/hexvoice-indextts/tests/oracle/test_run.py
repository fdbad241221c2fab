"""Upstream's own IndexTTS2.infer on the tiny model, offline, each call in a
fresh interpreter: the output's format, and that it is a function of the
seed and the model alone."""

from __future__ import annotations

import numpy as np

from hexvoice_indextts.oracle.run import OUT_RATE, infer_int16_subprocess

#: Far below the tiny vocoder's typical level (about 0.1 of full scale, some
#: 3000 int16 steps) and far above what rounding noise reaches: an output this
#: quiet means a part of the pipeline produced nothing.
MIN_PEAK: int = 100


def test_infer_returns_int16_at_22050(first_run):
    assert first_run.rate == OUT_RATE
    wav = first_run.wav
    assert wav.dtype == np.int16
    assert wav.ndim == 2 and wav.shape[1] == 1
    assert wav.shape[0] > 0
    peak = np.abs(wav.astype(np.int32))
    assert peak.max() > MIN_PEAK
    # upstream clamps to [-1, 1] before scaling: a tiny model that clips most
    # of its samples would compare only signs
    assert np.mean(peak >= np.iinfo(np.int16).max) < 0.5


def test_same_seed_same_bytes_in_one_process(first_run):
    # the second call recomputes the speaker conditioning (oracle.run clears
    # upstream's prompt cache), so it sees the same RNG stream as the first
    assert first_run.again.tobytes() == first_run.wav.tobytes()


def test_same_seed_same_bytes_in_another_process(first_run, tiny, clip):
    rate, wav = infer_int16_subprocess(tiny.model, tiny.hf_home, clip, seed=0)
    assert rate == first_run.rate
    assert wav.tobytes() == first_run.wav.tobytes()


def test_other_model_other_bytes(first_run, tiny_other, clip):
    _, wav = infer_int16_subprocess(tiny_other.model, tiny_other.hf_home, clip, seed=0)
    assert wav.tobytes() != first_run.wav.tobytes()
