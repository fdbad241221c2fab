"""Input audio as upstream normalises it, streamed: mono, 16 kHz, peak <= 1.

Upstream (qwen_asr inference/utils.py ``normalize_audio_input``): ``to_mono``
(the channel mean: ``daemon.sdk.asr.downmix``), ``librosa.resample`` to
16 kHz (its default ``soxr_hq``, then ``fix_length`` to ``ceil(n * 16000 /
rate)`` samples), then
``float_range_normalize`` (divide by the peak when it exceeds 1, clip).

``Resampler`` does the resampling on a stream: ``soxr.ResampleStream`` at HQ
gives exactly the one-shot samples (measured max |diff| 0.0 at 8 k-192 kHz in
333- to 4000-sample chunks, tests/daemon/engines/qwen3/asr/test_audio.py), and
``finish`` pads the tail to librosa's length.  The peak division needs the
whole utterance, so it is not done here: the mel front end keeps unscaled
powers and applies the utterance's :func:`peak_scale` when it encodes
(mel.py), re-encoding what an earlier, smaller peak scaled.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import soxr

#: upstream SAMPLE_RATE (inference/utils.py)
SAMPLE_RATE: Final = 16000
#: librosa.resample's default res_type "soxr_hq" is soxr's HQ quality
SOXR_QUALITY: Final = "HQ"


def peak_scale(peak: float) -> float:
    """The factor upstream's ``float_range_normalize`` multiplies by."""
    return 1.0 / peak if peak > 1.0 else 1.0


class Resampler:
    """Mono float32 at any one rate in, 16 kHz out, equal to upstream's one-shot."""

    def __init__(self, rate: int) -> None:
        if rate <= 0:
            raise ValueError(f"sample rate must be positive, got {rate}")
        self.rate = rate
        self._stream = (
            None
            if rate == SAMPLE_RATE  # upstream resamples only other rates
            else soxr.ResampleStream(
                rate, SAMPLE_RATE, 1, dtype="float32", quality=SOXR_QUALITY
            )
        )
        self._fed = 0  # input samples
        self._made = 0  # output samples

    def push(self, mono: np.ndarray, last: bool = False) -> np.ndarray:
        """The 16 kHz samples ``mono`` made ready (``last``: and the tail)."""
        self._fed += len(mono)
        if self._stream is None:
            out = np.asarray(mono, np.float32)
        else:
            out = self._stream.resample_chunk(mono, last=last)
        if last:
            # librosa fix_length: zero-pad (or trim) to ceil(n * ratio)
            want = math.ceil(self._fed * SAMPLE_RATE / self.rate)
            total = self._made + len(out)
            if total < want:
                out = np.concatenate([out, np.zeros(want - total, np.float32)])
            elif total > want:
                out = out[: len(out) - (total - want)]
        self._made += len(out)
        return np.asarray(out, np.float32)

    def finish(self) -> np.ndarray:
        return self.push(np.zeros(0, np.float32), last=True)
