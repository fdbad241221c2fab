"""Speed as upstream's SoVITS decode does it, inside one static ``vits_enc`` graph.

Upstream (module/models.py ``TextEncoder.forward``;
docs/gpt-sovits.md, SoVITS decode, step 3): after ``encoder2`` and before ``proj``, when
``speed != 1``, ``y = F.interpolate(y, size=int(T / speed) + 1, mode="linear")``
(align_corners False) over the T = 2N latent frames, and the mask is resized by
nearest.  So the flow, the prior noise and the vocoder all run on
``int(2N / speed) + 1`` frames: audio ``(int(2N / speed) + 1) * 640`` samples.

Here the interpolation is an input of the graph: ``stretch`` [1, FR, FR], a
matrix whose column j holds the two linear-interpolation weights of output
frame j over the real input frames (zero rows for padding, zero columns past
the output), applied as ``y @ stretch``.  One static graph serves every speed,
the weights are exactly torch's (test_speed.py compares them bit for bit), and
speed 1 is the identity, so a speed-1 request computes what it computed before
(x * 1 + 0 is exact).  ``z_mask`` [1, 1, FR] is the resized mask: nearest
resizing of B = 1's all-ones mask is all ones, over the output frames.

Why a matrix rather than splitting the graph at encoder2: one graph call per
segment instead of two, no [hidden, FR] round trip through the host, the same
graph keys; the price is FR² weights (1 MB at FR = 500) and hidden x FR² MACs
(48 M at full size, ~1 % of the encoder's).
"""

from __future__ import annotations

from typing import Final

import numpy as np

#: Upstream's speed range: the WebUIs' sliders (inference_webui.py "语速" and
#: inference_webui_fast.py speed_factor: gr.Slider(minimum=0.6, maximum=1.65));
#: api_v2.py passes speed_factor through unchecked.
MIN_SPEED: Final = 0.6
MAX_SPEED: Final = 1.65
SPEED_RANGE: Final = (MIN_SPEED, MAX_SPEED)

#: vits_enc inputs that carry the speed (bundles built before them lack both).
STRETCH: Final = "stretch"
Z_MASK: Final = "z_mask"


def stretched_frames(frames: int, speed: float) -> int:
    """Output frames of ``frames`` latent frames at ``speed`` (upstream: no
    interpolation at exactly 1, else ``int(T / speed) + 1``, in Python floats)."""
    if frames < 1:
        raise ValueError(f"need at least one latent frame, got {frames}")
    if not (isinstance(speed, int | float) and np.isfinite(speed) and speed > 0):
        raise ValueError(f"speed must be a positive finite number, got {speed!r}")
    return frames if speed == 1 else int(frames / speed) + 1


def speed_io(frames: int) -> dict[str, tuple[int, ...]]:
    """Shapes of the two speed inputs of a ``frames``-frame vits_enc graph."""
    return {STRETCH: (1, frames, frames), Z_MASK: (1, 1, frames)}


def fill_stretch(out: np.ndarray, frames: int, speed: float) -> int:
    """Write the interpolation matrix of ``frames`` real input frames at
    ``speed`` into ``out`` [FR, FR] (zeros elsewhere); returns the output
    frames.  ValueError when they exceed FR."""
    fr = out.shape[-1]
    n_out = stretched_frames(frames, speed)
    if frames > fr or n_out > fr:
        raise ValueError(
            f"{frames} latent frames at speed {speed:g} make {n_out} frames; "
            f"the vits_enc graph holds {fr}"
        )
    out[...] = 0.0
    cols = np.arange(n_out)
    if n_out == frames and speed == 1:
        out[cols, cols] = 1.0
        return n_out
    i0, lam = _linear_weights(frames, n_out)
    i1 = np.minimum(i0 + 1, frames - 1)
    # At the last input frame both weights land on one row, summed in float32
    # as torch sums x0 * l0 + x1 * l1 with x0 = x1.
    np.add.at(out, (i0, cols), np.float32(1.0) - lam)
    np.add.at(out, (i1, cols), lam)
    return n_out


def _linear_weights(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """Source frame and its weight per output frame, as ATen's CPU
    upsample_linear1d computes them (UpSample.h area_pixel_compute_scale /
    area_pixel_compute_source_index, align_corners False): scale = in / out in
    float32, src = scale * (j + 0.5) - 0.5 clamped at 0.  The compiled kernel
    contracts that into one fused multiply-add, i.e. one rounding to float32;
    a float64 product of two float32 values is exact, so rounding the float64
    result once reproduces it (bit-identical for every T <= 500 at upstream's
    speeds, test_speed.py)."""
    scale = np.float32(n_in) / np.float32(n_out)
    j = np.arange(n_out, dtype=np.float64)
    src = (np.float64(scale) * (j + 0.5) - 0.5).astype(np.float32)
    src = np.maximum(src, np.float32(0.0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(np.float32), 0.0, 1.0).astype(np.float32)
    return i0, lam


def max_tokens(fr: int, frames_per_token: int, speed: float) -> int:
    """Most semantic tokens whose latent frames, stretched at ``speed``, fit a
    ``fr``-frame graph (slow speech needs more output frames than tokens give)."""
    n = fr // frames_per_token
    while n > 0 and stretched_frames(n * frames_per_token, speed) > fr:
        n -= 1
    return n
