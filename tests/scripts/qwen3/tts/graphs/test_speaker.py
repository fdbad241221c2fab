"""speaker_<F> (fp32 ONNX on the CPU backend) against upstream's speaker encoder
on the unpadded mel, at every kind of clip length a bucket holds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from daemon.engines.qwen3.tts.xvector import speaker_feeds
from scripts.common.build.runners import cpu_runner
from scripts.common.parity import rel_error
from scripts.qwen3.tts.graphs import speaker, speaker_gate
from scripts.qwen3.tts.upstream import import_qwen_tts
from tests.scripts.qwen3.tts.conftest import SPEAKER_FRAMES

#: the tiny checkpoint's widest conv: kernel 3, dilation 4 (upstream's too)
PAD = 4


def _mel(frames: int, seed: int) -> np.ndarray:
    """Upstream's own x-vector mel of a noise clip, [F, 128].

    docs/qwen3.md, x-vector mel.
    """
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


@pytest.fixture(scope="module")
def runners(speaker_graphs: dict[int, Any]) -> dict[int, Any]:
    return {f: cpu_runner(path) for f, path in speaker_graphs.items()}


def test_the_widest_padding_is_the_checkpoints(tts_base: Any) -> None:
    assert speaker.reflect_pad(tts_base) == PAD


def test_the_cpu_gates_pass_at_every_length(
    tts_base: Any, runners: dict[int, Any]
) -> None:
    """The gate's lengths: the shortest each bucket holds (the encoder's
    minimum, one frame over the smaller bucket), an odd one, the bucket."""
    assert speaker_gate.lengths(SPEAKER_FRAMES, PAD + 1) == {
        40: (5, 23, 40), 63: (41, 53, 63),
    }  # fmt: skip
    results = speaker_gate.cpu_gates(tts_base, runners, _mel(max(SPEAKER_FRAMES), 3))
    assert {f: len(rows) for f, rows in results.items()} == {40: 3, 63: 3}
    for rows in results.values():
        assert all(r.passed for r in rows), [str(r) for r in rows]


@pytest.mark.parametrize(("bucket", "n"), [(40, 6), (40, 39), (63, 42), (63, 62)])
def test_other_lengths_are_upstreams_xvector(
    tts_base: Any, runners: dict[int, Any], bucket: int, n: int
) -> None:
    """Even and odd, next to the shortest and next to the bucket."""
    mel = _mel(bucket, n)
    want = speaker_gate.upstream(tts_base, mel[:n])
    outs = runners[bucket].run(speaker_feeds(mel[:n], bucket, PAD))
    got = outs[runners[bucket].output_index["xvec"]]
    assert got.shape == want.shape == (1, 64)
    assert rel_error(want, got) <= speaker_gate.CPU_MAX_REL_ERR


def test_upstream_takes_no_clip_shorter_than_the_minimum(tts_base: Any) -> None:
    """torch's reflect padding needs more frames than it pads: 4 frames fail."""
    with pytest.raises(RuntimeError, match="[Pp]adding size"):
        speaker_gate.upstream(tts_base, _mel(PAD, 1))


def test_padding_without_the_reflect_index_is_not_upstreams(
    tts_base: Any, runners: dict[int, Any]
) -> None:
    """The masks alone are not enough: with the reflection of the whole
    bucket (the padded zeros read as frames), a short clip's x-vector moves;
    a different clip moves it too (the gate can fail)."""
    f, n = 63, 45
    mel = _mel(f, 1)
    want = speaker_gate.upstream(tts_base, mel[:n])
    feeds = speaker_feeds(mel[:n], f, PAD)
    feeds["reflect"] = speaker_feeds(mel, f, PAD)["reflect"]
    got = runners[f].run(feeds)[0]
    assert rel_error(want, got) > 100 * speaker_gate.CPU_MAX_REL_ERR
    other = runners[f].run(speaker_feeds(_mel(f, 2)[:n], f, PAD))[0]
    assert rel_error(want, other) > 100 * speaker_gate.CPU_MAX_REL_ERR
