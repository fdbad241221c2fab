"""torchaudio's sinc resampler written out in torch: the tests' oracle.

torchaudio cannot be installed beside this venv's torch (each of its wheels is
built for one torch), so this evaluates its documented kernel formula with the
same torch operations and dtypes as ``torchaudio.transforms.Resample(rate,
target)`` does on a float32 clip: tap offsets in float64, phase offsets as an
integer arange divided in the default dtype (float32), the kernel cast to
float32; a strided float32 ``conv1d`` over the zero-padded clip; the length
``ceil`` of a float32 quotient.
"""

from __future__ import annotations

import math

import numpy as np
import torch

HANN, KAISER = "sinc_interp_hann", "sinc_interp_kaiser"
#: torchaudio's beta for the Kaiser window when none is given
KAISER_BETA = 14.769656459379492


def _reduced(rate: int, target: int) -> tuple[int, int]:
    g = math.gcd(rate, target)
    return rate // g, target // g


def oracle_kernel(
    rate: int,
    target: int,
    lowpass_filter_width: int = 6,
    rolloff: float = 0.99,
    resampling_method: str = HANN,
    beta: float | None = None,
) -> tuple[torch.Tensor, int]:
    """(float32 kernel [new, 2 * width + orig], width)."""
    orig, new = _reduced(rate, target)
    lw = lowpass_filter_width
    base = min(orig, new) * rolloff
    width = math.ceil(lw * orig / base)
    taps = torch.arange(-width, width + orig, dtype=torch.float64) / orig
    phases = torch.arange(0, -new, -1) / new  # float32, as torch divides ints
    t = ((phases[:, None] + taps[None, :]) * base).clamp(-lw, lw)
    if resampling_method == HANN:
        window = torch.cos(t * math.pi / lw / 2) ** 2
    else:
        b = torch.tensor(float(KAISER_BETA if beta is None else beta))
        window = torch.i0(b * torch.sqrt(1 - (t / lw) ** 2)) / torch.i0(b)
    x = t * math.pi
    sinc = torch.where(x == 0, torch.ones_like(x), torch.sin(x) / x)
    return (sinc * (window * (base / orig))).to(torch.float32), width


def oracle(x: np.ndarray, rate: int, target: int, **kw: object) -> np.ndarray:
    """What ``torchaudio.transforms.Resample(rate, target, **kw)`` gives for
    float32 ``x`` [n]."""
    if rate == target:
        return x
    orig, new = _reduced(rate, target)
    kernel, width = oracle_kernel(rate, target, **kw)  # type: ignore[arg-type]
    with torch.no_grad():
        padded = torch.nn.functional.pad(
            torch.from_numpy(x)[None, None], (width, width + orig)
        )
        y = torch.nn.functional.conv1d(padded, kernel[:, None], stride=orig)
    n = int(torch.ceil(torch.as_tensor(new * len(x) / orig)))
    return y[0].T.reshape(-1)[:n].numpy()
