"""The speaker style (CAM++, 192 wide) of a 16 kHz speaker clip, on the
static ``campplus`` graph of the smallest frame bucket that holds the clip.

Upstream (``infer_v2._get_speaker_conditioning``): the clip, cut to 15 s and
resampled to 16 kHz, gives ``kaldi.fbank(num_mel_bins=80, dither=0,
sample_frequency=16000)``; its mean over time is subtracted and CAM++ reads
the result.  Here the fbank is the SDK's (daemon/sdk/audio/fbank.py, computed
in float64), the mean is taken in float64 too, and the frames go to the graph
first with zeros after and a 0/1 mask saying which are real
(hexvoice_indextts/graphs/campplus.py makes the result the unpadded one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np
from daemon.sdk.audio.fbank import (
    FBANK_RATE,
    FRAME,
    SHIFT,
    frames_of,
    kaldi_fbank,
)

from hexvoice_indextts.voice.frames import bucket_for, padded

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner

#: upstream cuts the speaker clip to 15 s (_load_and_cut_audio(..., 15))
MAX_SECONDS: Final = 15
#: the fbank frames of a 15 s clip: the largest bucket a build needs
MAX_FRAMES: Final = frames_of(MAX_SECONDS * FBANK_RATE)
#: CAM++'s statistics pooling divides by (frames after its stride-2 layer) - 1
MIN_FRAMES: Final = 3
INPUTS: Final = ("fbank", "mask")
OUTPUT: Final = "style"


def style_features(audio16k: np.ndarray) -> np.ndarray:
    """float32 [frames, 80]: the clip's fbank less its mean over time."""
    feat = kaldi_fbank(audio16k).astype(np.float64)
    if len(feat) < MIN_FRAMES:
        raise ValueError(
            f"speaker clip: {len(feat)} fbank frames, CAM++ needs at least "
            f"{MIN_FRAMES} ({(MIN_FRAMES - 1) * SHIFT + FRAME} samples at 16 kHz)"
        )
    return (feat - feat.mean(axis=0, keepdims=True)).astype(np.float32)


def bucket_inputs(feat: np.ndarray, frames: int) -> dict[str, np.ndarray]:
    """The graph's inputs for ``feat`` [n, 80] in a bucket of ``frames``."""
    fbank, mask = padded(feat, frames, what="fbank frames")
    return {"fbank": fbank, "mask": mask}


def style(graphs: Mapping[int, Runner], feat: np.ndarray) -> np.ndarray:
    """[1, 192] style of ``feat`` on the graph of its bucket (bucket -> graph)."""
    frames = bucket_for(len(feat), list(graphs), "speaker clip: fbank frames")
    return graphs[frames].run(bucket_inputs(feat, frames))[0]
