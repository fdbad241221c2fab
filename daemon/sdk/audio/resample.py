"""A whole clip at another rate, exactly as ``librosa.resample`` makes it.

Upstream GPT-SoVITS (``librosa.load(sr=...)``) and Qwen3-TTS
(``create_voice_clone_prompt``) resample reference clips with librosa 0.11's
default res_type "soxr_hq": soxr at HQ quality, then ``fix_length`` to
ceil(n * target / rate) samples.  Engines that take a clip call this instead
of librosa (not on the board); a stream is resampled by ``shaping.py``;
where upstream uses torchaudio's resampler instead, ``sinc.py`` makes the copy.
"""

from __future__ import annotations

from typing import Final

import numpy as np

#: librosa.resample's default res_type in librosa 0.11 ("soxr_hq")
RESAMPLE_QUALITY: Final = "HQ"


def resample(pcm: np.ndarray, rate: int, target: int) -> np.ndarray:
    """float32 ``pcm`` [n] at ``target`` Hz as ``librosa.resample(res_type=
    "soxr_hq")`` makes it: soxr HQ, then cut or zero-padded to
    ceil(n * target / rate).  At the same rate, the samples as they are (no
    copy when already contiguous float32)."""
    x = np.asarray(pcm, np.float32)
    if rate == target:
        return np.ascontiguousarray(x)
    import soxr  # only a clip's registration resamples: keep it off the load path

    y = soxr.resample(x, rate, target, quality=RESAMPLE_QUALITY)
    n = int(np.ceil(len(x) * (target / rate)))
    if len(y) >= n:
        return np.ascontiguousarray(y[:n], np.float32)
    return np.pad(y, (0, n - len(y))).astype(np.float32)
