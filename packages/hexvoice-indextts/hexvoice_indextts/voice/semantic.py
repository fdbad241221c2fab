"""w2v-BERT 2.0's input for a 16 kHz speaker clip, as upstream's
``SeamlessM4TFeatureExtractor`` makes it (transformers, with the real
``preprocessor_config.json``), padded into a row bucket of the static
``w2v_bert`` graph.

The extractor: Kaldi's fbank of the clip scaled to the int16 range (the same
fbank as CAM++'s, daemon/sdk/audio/fbank.py: a factor 32768 on the samples is
a constant 2 ln 32768 on the log energies, but for those at the floor);
each mel bin less its mean over time, divided by sqrt(var (ddof 1) + 1e-7);
the frame count padded to even with ``padding_value`` (1.0); each pair of
frames stacked into one row of 160.  A row is real when its second frame is,
so an odd clip's last row (its last frame and the padding) is in the
features but masked, and upstream's hidden states keep it.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from daemon.sdk.audio.fbank import MEL_BINS, kaldi_fbank

from hexvoice_indextts.voice.frames import padded

#: "Kaldi compliance: 16-bit signed integers" (feature_extraction_seamless_m4t)
INT16_SCALE: Final = 2.0**15
#: the extractor's variance floor and the real preprocessor_config.json's
#: stride and padding_value
VAR_FLOOR: Final = 1e-7
STRIDE: Final = 2
PADDING_VALUE: Final = 1.0
ROW: Final = MEL_BINS * STRIDE
INPUTS: Final = ("features", "mask")
OUTPUT: Final = "hidden"


def w2v_features(audio16k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float32 [rows, 160] features, float32 [rows] 0/1 mask) of a clip."""
    feat = kaldi_fbank(np.asarray(audio16k, np.float64) * INT16_SCALE)
    if len(feat) < STRIDE:
        raise ValueError(
            f"speaker clip: {len(feat)} fbank frame(s), w2v-BERT needs {STRIDE}"
        )
    x = feat.astype(np.float64)
    x = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0, ddof=1) + VAR_FLOOR)
    frames = len(x)
    even = -(-frames // STRIDE) * STRIDE
    x = np.concatenate([x, np.full((even - frames, MEL_BINS), PADDING_VALUE)])
    real = np.arange(even) < frames
    mask = real[STRIDE - 1 :: STRIDE].astype(np.float32)
    return x.reshape(even // STRIDE, ROW).astype(np.float32), mask


def bucket_inputs(
    features: np.ndarray, mask: np.ndarray, rows: int
) -> dict[str, np.ndarray]:
    """The graph's inputs in a bucket of ``rows`` (zeros and mask 0 after)."""
    f, m = padded(features, rows, mask, what="w2v-BERT rows")
    return {"features": f, "mask": m}
