"""The gate input: deterministic, more than one attention window when the
smallest prefill bucket holds it, shortened to whole seconds when it does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scripts.qwen3.asr.pipeline import gating
from tests.qwen3_bundles import asr_context

#: mel frames per second (hop 160 at 16 kHz) and tokens per 100-frame chunk
FRAMES_PER_S, TOKENS_PER_CHUNK = 100, 13


def _inputs(model: Path, work: Path, prefill: int, kv: int) -> gating.GateInputs:
    return gating.gate_inputs(asr_context(model, work, prefill, kv))


def test_the_clip_is_fixed():
    np.testing.assert_array_equal(gating.gate_clip(1.0), gating.gate_clip(1.0))
    assert gating.gate_clip(2.0).dtype == np.float32
    assert np.abs(gating.gate_clip(2.0)).max() <= 1.0


def test_the_clip_spans_more_than_one_window(tiny_asr_model: Path, tmp_path: Path):
    x = _inputs(tiny_asr_model, tmp_path, 128, 192)
    window_frames = 4 * FRAMES_PER_S  # tiny: 4 chunks of 100 frames
    assert x.mel.shape == (128, 5 * FRAMES_PER_S) and x.mel.shape[1] > window_frames
    assert len(x.prompt) <= 128 and len(x.tokens) == gating.CPU_STEPS


def test_a_small_prefill_bucket_shortens_the_clip(tiny_asr_model: Path, tmp_path):
    x = _inputs(tiny_asr_model, tmp_path, 64, 96)
    seconds = x.mel.shape[1] // FRAMES_PER_S
    assert seconds == 3 and len(x.prompt) <= 64
    assert len(x.prompt) - seconds * TOKENS_PER_CHUNK > 0  # the text tokens


def test_a_bucket_without_room_for_a_second_is_refused(tiny_asr_model, tmp_path):
    with pytest.raises(gating.GateError, match="prefill bucket 20: no room for one"):
        _inputs(tiny_asr_model, tmp_path, 20, 96)
