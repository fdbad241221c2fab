"""A whole clip at another rate, exactly as torchaudio's sinc resampler makes it
(``resample.py``'s ``TORCHAUDIO_SINC``).

Upstream GPT-SoVITS resamples a reference for its spectrogram (to 32 kHz) and
for its speaker embedding (32 -> 16 kHz) with ``torchaudio.transforms.Resample``
at its defaults; the board has no torch, so this is its arithmetic in numpy
(torchaudio.functional.functional ``_get_sinc_resample_kernel`` and
``_apply_sinc_resample_kernel``):

- the rates reduced by their gcd to ``orig``/``new``; ``new`` filter phases;
- phase j, tap m: t = (float32(-j / new) + (m - width) / orig) * base in float64,
  base = min(orig, new) * rolloff, width = ceil(lowpass_filter_width * orig /
  base), t clamped to +-lowpass_filter_width; tap = sinc(pi t) * window(t) *
  base / orig, then cast to float32 (``Resample`` with no dtype: the kernel in
  float64, kept in float32; the first term is float32 because torch divides an
  integer arange in the default dtype);
- the clip zero-padded by width on the left and width + orig on the right,
  phase j of output block k reads taps from input k * orig; the output cut to
  ceil(float32(new * n / orig)) samples (``torch.as_tensor`` of that quotient
  is float32, so a quotient just above an integer can lose its last sample).

With the Hann window a tap whose t is clamped is exactly 0 in float32 (its
sinc * window is ~1e-49), so only the 2 * width + 2 taps around each phase's
centre are evaluated and summed, in float64, then rounded to float32: torch's
dense float32 convolution up to its own rounding, in memory bounded by the
clip, for any pair of rates.  (Kaiser's clamped taps are ~1e-22, not 0: the
banded sum leaves out at most 2 * width + orig of them per sample; and its
window's gain is within 3e-7 of torch's, whose float32 i0 is a few ulp off.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np

#: torchaudio.transforms.Resample's defaults
LOWPASS_FILTER_WIDTH: Final = 6
ROLLOFF: Final = 0.99
HANN: Final = "sinc_interp_hann"
KAISER: Final = "sinc_interp_kaiser"
#: torchaudio's default beta for sinc_interp_kaiser
KAISER_BETA: Final = 14.769656459379492
#: float64 elements gathered per block of output: a few MB, whatever the clip
BLOCK_ELEMENTS: Final = 1 << 19
#: kernels kept (a clip's registration uses two; the build a few more)
KERNEL_CACHE: Final = 16


@dataclass(frozen=True)
class Lowpass:
    """``torchaudio.transforms.Resample``'s filter arguments (its defaults)."""

    #: zero crossings of the sinc on each side
    lowpass_filter_width: int = LOWPASS_FILTER_WIDTH
    #: the cutoff as a fraction of the lower rate's Nyquist
    rolloff: float = ROLLOFF
    #: HANN or KAISER (torchaudio's ``resampling_method``)
    method: str = HANN
    #: KAISER's beta; None: KAISER_BETA
    beta: float | None = None

    def __post_init__(self) -> None:
        if self.lowpass_filter_width <= 0:
            raise ValueError("resample: lowpass_filter_width must be positive")
        if self.method not in (HANN, KAISER):
            raise ValueError(
                f"resample: method {self.method!r}, expected {HANN} or {KAISER}"
            )


#: torchaudio's filter at its defaults
DEFAULT: Final = Lowpass()


def reduced(rate: int, target: int) -> tuple[int, int]:
    g = math.gcd(rate, target)
    return rate // g, target // g


def out_length(n: int, rate: int, target: int) -> int:
    """Samples torchaudio returns for ``n`` at ``rate`` resampled to ``target``."""
    orig, new = reduced(rate, target)
    return math.ceil(np.float32(new * n / orig))


@lru_cache(maxsize=KERNEL_CACHE)
def _banded(orig: int, new: int, f: Lowpass) -> tuple[np.ndarray, np.ndarray, int]:
    """(first tap per phase [new], float64 taps [new, 2 * width + 2], width).
    Taps past torchaudio's kernel (m >= 2 * width + orig) are 0."""
    base = min(orig, new) * f.rolloff
    width = math.ceil(f.lowpass_filter_width * orig / base)
    first = (orig * np.arange(new, dtype=np.int64)) // new
    m = first[:, None] + np.arange(2 * width + 2)
    phase = np.arange(0, -new, -1, dtype=np.float32) / np.float32(new)
    t = phase.astype(np.float64)[:, None] + (m - width).astype(np.float64) / orig
    t *= base
    kernel = _taps(t, f, base / orig)
    kernel[m >= 2 * width + orig] = 0.0
    taps = kernel.astype(np.float32).astype(np.float64)
    first.flags.writeable = taps.flags.writeable = False
    return first, taps, width


def _taps(t: np.ndarray, f: Lowpass, scale: float) -> np.ndarray:
    """float64 taps at ``t`` (times base), as torchaudio's kernel formula."""
    lowpass, beta = f.lowpass_filter_width, f.beta
    t = np.clip(t, -lowpass, lowpass)
    if f.method == HANN:
        window = np.cos(t * math.pi / lowpass / 2) ** 2
    else:
        # torch.tensor(beta) is float32, and so is the i0 of it alone; torch's
        # float32 i0 is a few ulp from this one (a gain within 3e-7)
        b = np.float64(np.float32(KAISER_BETA if beta is None else beta))
        window = np.i0(b * np.sqrt(1 - (t / lowpass) ** 2)) / np.float64(
            np.float32(np.i0(b))
        )
    t = t * math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        kernel = np.where(t == 0, 1.0, np.sin(t) / t)
    kernel *= window * scale
    return kernel


def _check(rate: int, target: int) -> None:
    if rate <= 0 or target <= 0:
        raise ValueError(f"resample: rates must be positive, got {rate} -> {target}")


def kernel(rate: int, target: int, f: Lowpass = DEFAULT) -> tuple[np.ndarray, int]:
    """torchaudio's dense kernel, float32 [new, 2 * width + orig], and width
    (what the banded taps stand for; for a look at it, not for resampling)."""
    _check(rate, target)
    orig, new = reduced(rate, target)
    first, taps, width = _banded(orig, new, f)
    size = 2 * width + orig
    # every tap outside the band has t clamped to the filter's edge
    base = min(orig, new) * f.rolloff
    edge = np.array([f.lowpass_filter_width * 1.0])
    clamped = np.float32(_taps(edge, f, base / orig)[0])
    dense = np.full((new, size + 1), clamped, np.float32)
    cols = first[:, None] + np.arange(taps.shape[1])
    np.put_along_axis(dense, np.minimum(cols, size), taps.astype(np.float32), axis=1)
    return dense[:, :size], width


def sinc_resample(
    pcm: np.ndarray, rate: int, target: int, f: Lowpass = DEFAULT
) -> np.ndarray:
    """float32 ``pcm`` [n] at ``target`` Hz as ``torchaudio.transforms.Resample(
    rate, target, ...)`` with the arguments ``f`` makes it from a float32
    tensor.  At the same rate, the samples as they are (no copy when already
    contiguous float32)."""
    _check(rate, target)
    x = np.ascontiguousarray(pcm, np.float32)
    if x.ndim != 1:
        raise ValueError(f"resample: expected mono samples [n], got shape {x.shape}")
    if rate == target:
        return x
    orig, new = reduced(rate, target)
    first, taps, width = _banded(orig, new, f)
    n = out_length(len(x), rate, target)
    blocks = -(-n // new)
    # zeros: width before (torchaudio's pad), width + orig after, +1 for the
    # spare tap of the last phase
    padded = np.zeros(width + len(x) + width + orig + 1, np.float64)
    padded[width : width + len(x)] = x
    rows = np.lib.stride_tricks.sliding_window_view(padded, taps.shape[1])
    out = np.empty((blocks, new), np.float32)
    step = max(1, BLOCK_ELEMENTS // taps.size)
    for k0 in range(0, blocks, step):
        k = np.arange(k0, min(k0 + step, blocks))
        window = rows[k[:, None] * orig + first[None, :]]  # [k, new, taps]
        out[k] = np.einsum("knt,nt->kn", window, taps)
    return out.reshape(-1)[:n]
