"""A reference clip made ready for the reference-side graphs, as upstream's
``TTS.py`` prepares it, each copy with upstream's own resampler:

- HuBERT: the clip at 16 kHz as ``librosa.load(path, sr=16000)`` gives it
  (soxr HQ, then cut or zero-padded to ceil(n * 16000 / rate)); the 3..10 s
  bounds hold on this copy (``_set_prompt_semantic``);
- spectrogram: the clip as ``torchaudio.load`` reads it, at 32 kHz by
  ``torchaudio.transforms.Resample`` when at another rate (``_get_ref_spec``),
  then divided by min(2, peak) when its peak exceeds 1;
- sv: that peak-limited 32 kHz copy at 16 kHz, by ``Resample(32000, 16000)``
  again (``_get_ref_spec``'s v2Pro branch).

Both resamplers are the SDK's (daemon/sdk/audio/resample.py; torchaudio's
arithmetic in numpy: sinc.py).  Upstream downmixes a stereo file by its mean;
the service hands us mono.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from daemon.engines.gptsovits.reference.params import (
    HUBERT_RATE,
    MAX_REF_SECONDS,
    MIN_REF_SECONDS,
    SPEC_RATE,  # the SoVITS rate: _get_ref_spec resamples the clip to it
)
from daemon.sdk.audio.fbank import FBANK_RATE
from daemon.sdk.audio.resample import TORCHAUDIO_SINC, resample

#: rates a clip may come at (telephone to studio)
MIN_RATE: Final = 8000
MAX_RATE: Final = 192000
#: ``_get_ref_spec``: a clip louder than full scale is divided by min(2, peak)
PEAK_LIMIT: Final = 2.0


def peak_limited(pcm: np.ndarray) -> np.ndarray:
    peak = float(np.max(np.abs(pcm), initial=0.0))
    return pcm / min(PEAK_LIMIT, peak) if peak > 1.0 else pcm


def spec_copy(pcm: np.ndarray, rate: int) -> np.ndarray:
    """The spectrogram's input: ``pcm`` (float32 mono, as checked) at 32 kHz
    by torchaudio's resampler, peak-limited (``_get_ref_spec``)."""
    return peak_limited(resample(pcm, int(rate), SPEC_RATE, TORCHAUDIO_SINC))


def sv_copy(spec32k: np.ndarray) -> np.ndarray:
    """The fbank's input: the peak-limited 32 kHz copy at 16 kHz by
    torchaudio's resampler (``_get_ref_spec``, v2Pro)."""
    return resample(spec32k, SPEC_RATE, FBANK_RATE, TORCHAUDIO_SINC)


@dataclass(frozen=True)
class Clip:
    """One reference clip at the rates the graphs take."""

    hubert16k: np.ndarray  # float32 [n16], HuBERT's input
    spec32k: np.ndarray  # float32 [n32], peak-limited, the spectrogram's input
    sv16k: np.ndarray  # float32, spec32k at 16 kHz, the fbank's input

    @property
    def seconds(self) -> float:
        return len(self.hubert16k) / HUBERT_RATE


def check_pcm(audio: object, rate: object, what: str = "the clip") -> np.ndarray:
    """float32 mono [n], finite, at a plausible rate; ValueError saying what is
    wrong otherwise (integer PCM has no agreed scale: the caller converts)."""
    if isinstance(rate, bool) or not isinstance(rate, int | np.integer):
        raise ValueError(f"{what}: sample rate {rate!r} is not an integer")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise ValueError(
            f"{what}: sample rate {rate} Hz, expected {MIN_RATE}..{MAX_RATE} Hz"
        )
    a = np.asarray(audio)
    if a.dtype.kind != "f" or a.ndim != 1 or a.size == 0:
        raise ValueError(
            f"{what}: expected non-empty float mono samples, got {a.dtype} "
            f"{list(a.shape)}"
        )
    if not np.isfinite(a).all():
        raise ValueError(f"{what}: {int(np.sum(~np.isfinite(a)))} NaN/inf samples")
    return a.astype(np.float32, copy=False)


def prepare(
    audio: np.ndarray,
    rate: int,
    what: str = "the clip",
    longest: float = MAX_REF_SECONDS,
) -> Clip:
    """The clip for the graphs; ValueError (upstream's 3..10 s rule on the
    16 kHz copy, with its message) for one outside the bounds.  ``longest``:
    the bundle's windows' (``ReferenceParams.max_seconds``; 10 s at full size)."""
    pcm = check_pcm(audio, rate, what)
    h16 = resample(pcm, int(rate), HUBERT_RATE)
    lo, hi = MIN_REF_SECONDS * HUBERT_RATE, longest * HUBERT_RATE
    if not lo <= len(h16) <= hi:
        raise ValueError(
            f"{what}: {len(h16) / HUBERT_RATE:.2f} s; a reference must be "
            f"{MIN_REF_SECONDS:g}-{longest:g} s "
            "(upstream: 参考音频在3~10秒范围外)"
        )
    s32 = spec_copy(pcm, int(rate))
    return Clip(h16, s32, sv_copy(s32))


def prepare_aux(
    audio: np.ndarray, rate: int, what: str, longest: float = MAX_REF_SECONDS
) -> Clip:
    """An aux clip (no HuBERT copy: only the main clip gives prompt tokens).
    Upstream takes any length for its style; we hold it to the main clip's
    3..10 s: the static ``ref_enc``/``sv`` windows end at 10 s, and the
    service's bounds (``Cloning``) apply to every clip it takes."""
    pcm = check_pcm(audio, rate, what)
    s32 = spec_copy(pcm, int(rate))
    if not MIN_REF_SECONDS * SPEC_RATE <= len(s32) <= longest * SPEC_RATE:
        raise ValueError(
            f"{what}: {len(s32) / SPEC_RATE:.2f} s; an aux clip must be "
            f"{MIN_REF_SECONDS:g}-{longest:g} s"
        )
    empty = np.zeros(0, np.float32)
    return Clip(empty, s32, sv_copy(s32))
