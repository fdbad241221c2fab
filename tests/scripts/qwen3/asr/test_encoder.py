"""The one-window encoder graph (ONNX fp32 on onnxruntime) against upstream's
audio tower on utterances of at most one window, where upstream's own forward
(no window mask) and its windowed backends agree (qwen3.md §1.2). Longer audio,
window by window, is the encoder gate's (test_gates.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
import torch

from scripts.common.parity import rel_error
from scripts.qwen3.asr.encoder import (
    CHUNK_TOKENS,
    EncoderDims,
    stem_lengths,
    window_count,
    window_inputs,
)

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
def session(asr_graphs: Any) -> ort.InferenceSession:
    return ort.InferenceSession(
        str(asr_graphs.encoder), providers=["CPUExecutionProvider"]
    )


@pytest.fixture(scope="module")
def dims(asr_model: Any) -> EncoderDims:
    return EncoderDims.of(asr_model.thinker.audio_tower)


def _graph(
    session: ort.InferenceSession,
    mel: np.ndarray,
    dims: EncoderDims,
    ones: bool = False,
) -> np.ndarray:
    inputs = window_inputs(mel, 0, dims, MASK)
    if ones:
        inputs.feeds["stem_mask1"][...] = 1.0
        inputs.feeds["stem_mask2"][...] = 1.0
    (audio,) = session.run(None, inputs.feeds)
    return audio[inputs.valid]


def test_window_sizes_follow_the_config(dims: EncoderDims, asr_graphs: Any) -> None:
    assert (dims.chunks, dims.tokens) == (4, 4 * CHUNK_TOKENS)  # n_window_infer 400
    assert Path(asr_graphs.encoder).is_file()


@pytest.mark.parametrize("frames", [100, 250, 400])
def test_a_window_inside_an_utterance_equals_upstream(
    asr_model: Any, session: ort.InferenceSession, dims: EncoderDims, frames: int
) -> None:
    """≥ 100 frames: full chunks and a zero-padded tail chunk, stem masks all
    ones (upstream pads the tail itself)."""
    mel = _mel(frames)
    inputs = window_inputs(mel, 0, dims, MASK)
    assert inputs.feeds["stem_mask1"][: -(-frames // 100)].min() == 1.0
    want = _upstream(asr_model, mel)
    got = _graph(session, mel, dims)
    assert got.shape == want.shape
    assert rel_error(reference=want, test=got) < 1e-5


def test_an_utterance_under_one_chunk_needs_the_stem_masks(
    asr_model: Any, session: ort.InferenceSession, dims: EncoderDims
) -> None:
    """< 100 frames: upstream pads nothing, so the convs' padding reads zeros
    past the valid frames; the stem masks reproduce that, all ones do not."""
    mel = _mel(37, seed=1)
    one, two, tokens = stem_lengths(37)
    inputs = window_inputs(mel, 0, dims, MASK)
    assert inputs.feeds["stem_mask1"][0, 0, 0].sum() == one == 19
    assert inputs.feeds["stem_mask2"][0, 0, 0].sum() == two == 10
    assert inputs.valid.sum() == tokens == 5
    want = _upstream(asr_model, mel)
    assert rel_error(reference=want, test=_graph(session, mel, dims)) < 1e-5
    assert rel_error(reference=want, test=_graph(session, mel, dims, ones=True)) > 1e-3


def test_window_inputs_cut_upstreams_chunks_and_windows(dims: EncoderDims) -> None:
    """987 frames: 10 chunks (the last of 87 frames), 3 windows of 4 chunks."""
    mel = _mel(987)
    assert window_count(987, dims) == 3
    last = window_inputs(mel, 2, dims, MASK)
    # chunk 8 full, chunk 9 the 87-frame tail, chunks 10, 11 padding
    np.testing.assert_array_equal(last.feeds["mel"][1, 0, :, :87], mel[:, 900:])
    assert not last.feeds["mel"][1, 0, :, 87:].any()
    assert last.valid.sum() == CHUNK_TOKENS + stem_lengths(87)[2]
    key = last.feeds["key_mask"][0, 0, 0]
    assert (key[last.valid] == 0).all() and (key[~last.valid] == MASK).all()
