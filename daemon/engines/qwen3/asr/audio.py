"""Input audio as upstream normalises it: mono, 16 kHz, peak <= 1.

Upstream (qwen_asr inference/utils.py ``normalize_audio_input``): ``to_mono``
(the channel mean: ``daemon.sdk.asr.downmix``), ``librosa.resample`` to
16 kHz (its default ``soxr_hq``, then ``fix_length``), then
``float_range_normalize`` (divide by the peak when it exceeds 1, clip).

The session streams the resampling through the SDK's ``Resampler(rate,
SAMPLE_RATE)`` (daemon/sdk/audio/resample.py: soxr HQ in chunks gives the
one-shot samples, its last push librosa's length).  The peak division needs
the whole utterance, so it is not done on the samples: the mel front end keeps
unscaled powers and applies the utterance's :func:`peak_scale` when it encodes
(mel.py), re-encoding what an earlier, smaller peak scaled.
"""

from __future__ import annotations

from typing import Final

#: upstream SAMPLE_RATE (inference/utils.py)
SAMPLE_RATE: Final = 16000


def peak_scale(peak: float) -> float:
    """The factor upstream's ``float_range_normalize`` multiplies by."""
    return 1.0 / peak if peak > 1.0 else 1.0
