"""GPT-SoVITS's int16 conversion, carried through the shared float audio path.

Upstream (TTS_infer_pack/TTS.py ``audio_postprocess``), per segment: if
``max|x| > 1`` divide by that max ("简单防止16bit爆音"), append the pause, then
``(audio * 32768).astype(np.int16)``: scale by 32768, truncate toward zero, no
clipping.  Here:

- the max-normalisation never fires: every vocoder window ends in tanh, so
  ``|x| <= 1``, and the fades and pauses only lower it;
- ``x * 32768`` is exact in float32 (a power of two) and the cast truncates;
- a sample at exactly +1.0 would give 32768, which upstream's cast wraps to
  -32768 (numpy's float -> int16 is undefined out of range; on x86 it wraps);
  we clip it to 32767 instead (a full-scale peak must not flip sign).

Every protocol turns engine audio into PCM with the one shared
``daemon.sdk.audio.shaping.to_int16`` (round(x * 32767), clipped to int16),
which other engines' conventions rely on.  So this engine hands out upstream's
int16 value ``q`` as the float ``q / 32767``: ``to_int16`` maps it back to
exactly ``q`` (the float32 round trip errs by < 0.01 of a step), -32768
included.  Resampled output (another rate asked for) starts from those values.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.sdk.audio.shaping import INT16_MAX

#: upstream's scale: ``audio * 32768``
UPSTREAM_SCALE: Final = 32768
INT16_MIN: Final = -32768


def upstream_int16(audio: np.ndarray) -> np.ndarray:
    """int16 samples of float ``audio`` as upstream converts them (clipped)."""
    x = np.asarray(audio, np.float32) * np.float32(UPSTREAM_SCALE)
    return np.clip(np.trunc(x), INT16_MIN, INT16_MAX).astype(np.int16)


def on_int16_grid(audio: np.ndarray) -> np.ndarray:
    """float32 audio that the shared ``to_int16`` turns into exactly
    :func:`upstream_int16` of ``audio``."""
    return upstream_int16(audio).astype(np.float32) / np.float32(INT16_MAX)
