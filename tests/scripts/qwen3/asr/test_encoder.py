"""The one-window encoder graph (ONNX fp32 on the runtime's CPU backend, fed by
the engine's WindowEncoder) against upstream's audio tower on utterances of at
most one window, where upstream's own forward (no window mask) and its windowed
backends agree (docs/qwen3.md, ASR encoder windows). Longer audio, window by window, is
the encoder gate's (test_gates.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from daemon.engines.qwen3.asr.encoder import WindowEncoder
from scripts.common.build.runners import cpu_runner
from scripts.common.parity import rel_error
from scripts.qwen3.asr.encoder import CHUNK_TOKENS, EncoderDims

MASK = -100.0


def _mel(frames: int, seed: int = 0) -> np.ndarray:
    """A log-mel-like [M, F] (Whisper's normalised range is about [-1.5, 1.5])."""
    rng = np.random.default_rng(seed)
    return (0.5 * rng.standard_normal((128, frames))).astype(np.float32)


def _upstream(model: Any, mel: np.ndarray) -> np.ndarray:
    tower = model.thinker.audio_tower
    with torch.no_grad():
        out = tower(torch.from_numpy(mel), feature_lens=torch.tensor([mel.shape[1]]))
    return out.last_hidden_state.numpy()


@pytest.fixture(scope="module")
def window(asr_params: Any, asr_graphs: Any) -> WindowEncoder:
    return WindowEncoder(asr_params, cpu_runner(asr_graphs.encoder))


def _encode(window: WindowEncoder, mel: np.ndarray) -> np.ndarray:
    return window.encode(np.ascontiguousarray(mel.T), mel.shape[1])


def test_window_sizes_follow_the_config(asr_model: Any) -> None:
    dims = EncoderDims.of(asr_model.thinker.audio_tower)
    assert (dims.chunks, dims.tokens) == (4, 4 * CHUNK_TOKENS)  # n_window_infer 400


@pytest.mark.parametrize("frames", [100, 250, 400])
def test_a_window_inside_an_utterance_equals_upstream(
    asr_model: Any, window: WindowEncoder, frames: int
) -> None:
    """≥ 100 frames: full chunks and a zero-padded tail chunk, stem masks all
    ones (upstream pads the tail itself)."""
    mel = _mel(frames)
    want = _upstream(asr_model, mel)
    got = _encode(window, mel)
    assert window.graph.buffers["stem_mask1"].min() == 1.0
    assert got.shape == want.shape
    assert rel_error(reference=want, test=got) < 1e-5


def test_an_utterance_under_one_chunk_needs_the_stem_masks(
    asr_model: Any, window: WindowEncoder
) -> None:
    """< 100 frames: upstream pads nothing, so the convs' padding reads zeros
    past the valid frames; zeroed stem masks reproduce that, all ones do not."""
    mel = _mel(37, seed=1)
    want = _upstream(asr_model, mel)
    assert want.shape[0] == 5  # 37 → 19 → 10 → 5 frames
    assert rel_error(reference=want, test=_encode(window, mel)) < 1e-5
    b = window.graph.buffers
    assert b["stem_mask1"][0].sum() == 19 and b["stem_mask2"][0].sum() == 10
    b["stem_mask1"][...] = 1.0  # the same window with all-ones masks
    b["stem_mask2"][...] = 1.0
    window.graph.execute()
    ones = np.array(b["audio"][: len(want)])
    assert rel_error(reference=want, test=ones) > 1e-3
