"""speaker_<F> (fp32 ONNX on the CPU backend) against upstream's speaker encoder."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from scripts.gsv.verify.runtime import cpu_runner
from scripts.qwen3.tts.graphs import gates
from scripts.qwen3.tts.upstream import import_qwen_tts
from tests.scripts.qwen3.tts.conftest import SPEAKER_FRAMES


def _mel(frames: int, seed: int) -> np.ndarray:
    """Upstream's own x-vector mel of a noise clip (qwen3.md §2.5), [F, 128]."""
    hop = 256
    clip = 0.1 * np.random.default_rng(seed).standard_normal(frames * hop)
    mel = import_qwen_tts().modeling.mel_spectrogram(
        torch.from_numpy(clip.astype(np.float32))[None],
        1024,
        128,
        24000,
        hop,
        1024,
        0,
        12000,
    )
    return mel[0].T.numpy()[:frames]


@pytest.mark.parametrize("frames", SPEAKER_FRAMES)
def test_speaker_encoder_passes_the_cpu_gate(
    frames: int, tts_base: Any, speaker_graphs: dict[int, Any]
) -> None:
    mel = _mel(frames, frames)
    assert mel.shape == (frames, 128)
    runner = cpu_runner(speaker_graphs[frames])
    assert runner.outputs[0].shape == (
        1,
        tts_base.config.speaker_encoder_config.enc_dim,
    )
    result = gates.gate_speaker(tts_base, runner, mel)
    assert result.passed, str(result)


def test_speaker_gate_fails_on_another_clip(
    tts_base: Any, speaker_graphs: dict[int, Any]
) -> None:
    f = SPEAKER_FRAMES[0]
    runner = cpu_runner(speaker_graphs[f])
    mel = _mel(f, 1)
    x = runner.run({"mel": _mel(f, 2)[None]})[0]
    with torch.no_grad():
        want = tts_base.speaker_encoder(torch.from_numpy(mel[None])).numpy()
    assert np.abs(x - want).max() / np.abs(want).max() > gates.CPU_MAX_REL_ERR
