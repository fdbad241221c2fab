"""Frame bookkeeping on the CPU: the bucket a length goes to, which content
row each mel frame takes (torch's nearest interpolation, exactly), and the
rows of a length regulator bucket."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def bucket_for(n: int, buckets: Iterable[int], what: str) -> int:
    """The smallest bucket that holds ``n`` (ValueError past the largest,
    ``what`` naming the length, e.g. "speaker clip: fbank frames")."""
    ordered = sorted(buckets)
    fit = [b for b in ordered if b >= n]
    if not fit:
        raise ValueError(f"{what}: {n}, the largest bucket holds {ordered[-1]}")
    return fit[0]


def nearest_rows(rows: int, frames: int) -> np.ndarray:
    """int64 [frames]: the row ``F.interpolate(mode='nearest', size=frames)``
    reads for each output frame of ``rows`` input rows.  ATen's nearest_idx:
    the same index when the sizes match, ``i >> 1`` when doubling, else
    ``min(floorf(i * (float)rows / frames), rows - 1)`` in float32."""
    i = np.arange(frames)
    if frames == rows:
        return i
    if frames == 2 * rows:
        return i >> 1
    scale = np.float32(rows) / np.float32(frames)
    return np.minimum(np.floor(i.astype(np.float32) * scale).astype(np.int64), rows - 1)


def padded(
    rows: np.ndarray,
    bucket: int,
    mask: np.ndarray | None = None,
    what: str = "rows",
) -> tuple[np.ndarray, np.ndarray]:
    """(float32 [1, bucket, ...], float32 [1, bucket]): ``rows`` first, zeros
    after, and their 0/1 mask (``mask``, or 1 for every row) with 0 after: the
    input every bucketed graph takes."""
    n = len(rows)
    if n > bucket:
        raise ValueError(f"{n} {what} do not fit a bucket of {bucket}")
    x = np.zeros((1, bucket, *np.shape(rows)[1:]), np.float32)
    m = np.zeros((1, bucket), np.float32)
    x[0, :n], m[0, :n] = rows, 1.0 if mask is None else mask
    return x, m


def regulator_inputs(
    rows: np.ndarray, frames: int, bucket: int
) -> dict[str, np.ndarray]:
    """The length regulator's inputs: ``rows`` [n, width] picked for
    ``frames`` mel frames, in a bucket of ``bucket`` frames."""
    if frames > bucket:  # before picking frames rows
        raise ValueError(f"{frames} mel frames do not fit a bucket of {bucket}")
    x, m = padded(rows[nearest_rows(len(rows), frames)], bucket)
    return {"rows": x, "mask": m}


#: the dtype of a graph's gather indices: the HTP has no 64-bit integers
GATHER_INDEX = np.int32


def reflect_index(length: int, frames: int, pad: int) -> np.ndarray:
    """The frame each position of a reflection-padded bucket reads
    (graphs/dit.py): ``frames + 2 * pad`` positions from ``-pad``, mirrored at
    both ends of the ``length`` real frames as ``F.pad(mode="reflect")``
    mirrors them (the edge frame not repeated); positions past the mirror
    read real frames too (their outputs are masked)."""
    if length <= pad:
        raise ValueError(f"{length} frames cannot be reflected by {pad}")
    q = np.arange(-pad, frames + pad)
    q = np.where(q < 0, -q, q)
    q = np.where(q >= length, 2 * (length - 1) - q, q)
    return np.clip(q, 0, length - 1).astype(GATHER_INDEX)


#: BigVGAN's anti-aliased activations (graphs/bigvgan.py): 2x resampling with
#: kernels of 12: replication of 5 samples each side before the up-sampler,
#: of (5, 6) at twice the rate before the low-pass
RESAMPLE_RATIO, RESAMPLE_KERNEL = 2, 12


def replicate_edges(real: int, frames: int, rates: Iterable[int]) -> np.ndarray:
    """BigVGAN's ``edges`` input for ``real`` mel frames in a window of
    ``frames``: per up-sampling stage, the up-sampler's and the low-pass's
    gather indices, each position reading the nearest real sample (what
    replication padding reads past the real end)."""
    if not 0 < real <= frames:
        raise ValueError(f"{real} real frames in a window of {frames}")
    up = RESAMPLE_KERNEL // RESAMPLE_RATIO - 1
    down = (RESAMPLE_KERNEL // 2 - 1, RESAMPLE_KERNEL // 2)
    parts, n, t = [], frames, real
    for u in rates:
        n, t = n * u, t * u
        parts.append(np.clip(np.arange(-up, n + up), 0, t - 1))
        m, tm = RESAMPLE_RATIO * n, RESAMPLE_RATIO * t
        parts.append(np.clip(np.arange(-down[0], m + down[1]), 0, tm - 1))
    return np.concatenate(parts).astype(GATHER_INDEX)
