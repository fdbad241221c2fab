"""Cloning: clip checks with clear errors, the print's content id."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.qwen3.tts.clone import (
    MAX_CLIP_SECONDS,
    check_clip,
    speaker_model_id,
)
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.bundles.manifest import GraphSpec, TensorSpec
from tests.daemon.engines.qwen3.tts.test_params import base

RATE = 24000


def tone(seconds: float, rate: int = RATE) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def test_a_good_clip_comes_back_mono_float32() -> None:
    stereo = np.stack([tone(1.0), tone(1.0)], axis=-1).astype(np.float64)
    pcm = check_clip(stereo, RATE)
    assert pcm.dtype == np.float32 and pcm.shape == (RATE,)
    assert np.allclose(pcm, tone(1.0))
    assert check_clip(tone(1.0, 16000), np.int32(16000)).shape == (16000,)


@pytest.mark.parametrize(
    ("audio", "rate", "message"),
    [
        (tone(1.0), 24000.0, "sample rate 24000.0 is not an integer"),
        (tone(1.0), True, "is not an integer"),
        (tone(1.0), 4000, r"4000 Hz: expected 8000\.\.192000 Hz"),
        (tone(1.0), 384000, "384000 Hz"),
        (np.zeros(0, np.float32), RATE, r"non-empty float samples in \[-1, 1\]"),
        (np.array(["a", "b"]), RATE, "non-empty float samples"),
        ((tone(1.0) * 32767).astype(np.int16), RATE, "got int16"),
        (
            np.zeros((2, 3, 4), np.float32),
            RATE,
            r"\[samples\] or \[samples, channels\]",
        ),
        (np.where(np.arange(RATE) == 5, np.nan, tone(1.0)), RATE, "1 NaN or infinite"),
        (np.where(np.arange(RATE) < 3, np.inf, tone(1.0)), RATE, "3 NaN or infinite"),
        (tone(1.0) * 1e-4, RATE, r"silent \(peak below -60 dBFS\)"),
        (tone(MAX_CLIP_SECONDS + 1, 8000), 8000, r"61\.0 s; at most 60 s"),
    ],
)
def test_bad_clips_are_refused_clearly(
    audio: np.ndarray, rate: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        check_clip(audio, rate)  # type: ignore[arg-type]


def _specs(p: TtsParams, digest: str = "a") -> dict[str, GraphSpec]:
    assert p.xvector is not None
    io = (TensorSpec("mel", "float32", (1, 1, 128)),)
    return {
        f"speaker_{f}": GraphSpec(f"graphs/speaker_{f}.bin", digest * 64, io, io)
        for f in p.xvector.frame_buckets
    }


def test_model_id_follows_the_speaker_graphs() -> None:
    p = TtsParams.from_mapping(base())
    specs = _specs(p)
    first = speaker_model_id(p, specs)
    assert first == speaker_model_id(p, dict(reversed(list(specs.items()))))
    assert len(first) == 64 and int(first, 16) >= 0
    rebuilt = dict(specs)
    key = next(iter(rebuilt))
    rebuilt[key] = GraphSpec(rebuilt[key].file, "b" * 64, (), ())
    assert speaker_model_id(p, rebuilt) != first
    assert speaker_model_id(p, {**specs, "codec_8": rebuilt[key]}) == first
