"""CPU parts of a Piper (VITS) voice: SDP spline flows, durations, length regulation.

These are the pieces the converter cut out of the NPU graphs (see
scripts/piper/cuts.py for why): the stochastic duration predictor's reverse
flows pick spline bins per element with data-dependent indexing, and length
regulation changes the sequence length. Both are small (2 x phonemes and one
gather over frames), so numpy is fast enough; numba only supplies erf for GELU.

Shapes drop the batch axis: [channels, time].
Weights come from the voice's ONNX initializers via `sdp.npz` (written by
scripts/piper/convert.py); nothing is loaded at import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

# Rational-quadratic spline floors, VITS transforms.py DEFAULT_MIN_* (after
# Durkan et al. 2019, "Neural Spline Flows").
MIN_BIN_WIDTH = 1e-3
MIN_BIN_HEIGHT = 1e-3
MIN_DERIVATIVE = 1e-3
# transforms.searchsorted nudges the last knot so an input equal to the bound
# still lands in the last bin.
SEARCH_EPS = 1e-6
# Flow kinds as the converter names them in sdp.npz.
FLIP, CONV_FLOW, AFFINE = "flip", "conv", "affine"
_SCALARS = ("num_bins", "tail_bound", "bin_scale", "ln_eps", "dds_layers")


# float32 constants keep the numba kernel in float32, like the ONNX graph.
_HALF, _ONE, _INV_SQRT2 = np.float32(0.5), np.float32(1.0), np.float32(1 / math.sqrt(2))


@numba.vectorize(nopython=True)
def _gelu(x):  # type: ignore[no-untyped-def]
    # numpy has no erf; numba's is libm's (erff for float32), fused into one pass.
    # Lazily compiled for the dtype of the first call (no import-time work).
    return _HALF * x * (_ONE + math.erf(x * _INV_SQRT2))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU as torch.nn.functional.gelu, float32 like the ONNX graph."""
    return _gelu(x.astype(np.float32, copy=False))


def layer_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float
) -> np.ndarray:
    """LayerNorm over channels (axis 0), as VITS modules.LayerNorm."""
    mean = x.mean(axis=0, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=0, keepdims=True)
    return centred / np.sqrt(var + eps) * gamma[:, None] + beta[:, None]


def conv1x1(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return w @ x + b[:, None]


def depthwise_conv(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, dilation: int
) -> np.ndarray:
    """Depthwise 'same' conv, odd kernel, zero padding. w: [channels, kernel]."""
    kernel = w.shape[1]
    pad = dilation * (kernel - 1) // 2
    xp = np.pad(x, ((0, 0), (pad, pad)))
    t = x.shape[1]
    out = np.repeat(b[:, None], t, axis=1).astype(np.float32)
    for k in range(kernel):
        out += w[:, k : k + 1] * xp[:, k * dilation : k * dilation + t]
    return out


@dataclass(frozen=True)
class DurationPredictor:
    """Reverse pass of VITS's StochasticDurationPredictor after its conditioning.

    The conditioning stack (pre, DDSConv, proj on the text encoding) runs on the
    NPU inside the text-encoder graph; this class takes its output `cond`.
    """

    weights: dict[str, np.ndarray]
    kinds: tuple[str, ...]
    num_bins: int
    tail_bound: float
    bin_scale: float
    ln_eps: float
    dds_layers: int

    @classmethod
    def load(cls, path: Path) -> DurationPredictor:
        with np.load(path, allow_pickle=False) as data:
            return cls.from_arrays({k: data[k] for k in data.files})

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> DurationPredictor:
        """Build from the sdp.npz arrays (see scripts/piper/sdp_export.py)."""
        weights = dict(arrays)
        missing = [k for k in _SCALARS + ("kinds",) if k not in weights]
        if missing:
            raise ValueError(f"SDP weights are missing {missing}: re-run the converter")
        kinds = tuple(str(k) for k in weights.pop("kinds"))
        bad = set(kinds) - {FLIP, CONV_FLOW, AFFINE}
        if bad:
            raise ValueError(f"unknown SDP flow kinds {sorted(bad)}")
        scalars = {k: weights.pop(k) for k in _SCALARS}
        return cls(
            weights=weights,
            kinds=kinds,
            num_bins=int(scalars["num_bins"]),
            tail_bound=float(scalars["tail_bound"]),
            bin_scale=float(scalars["bin_scale"]),
            ln_eps=float(scalars["ln_eps"]),
            dds_layers=int(scalars["dds_layers"]),
        )

    def logw(self, cond: np.ndarray, mask: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """Log durations [t] from cond [c, t], mask [t] and noise [2, t].

        `noise` is N(0, 1) already multiplied by noise_w (zeros = deterministic).
        """
        t = cond.shape[-1]
        if cond.ndim != 2 or mask.shape != (t,) or noise.shape != (2, t):
            raise ValueError(
                f"SDP wants cond [c, t], mask [t], noise [2, t]; got {cond.shape}, "
                f"{mask.shape}, {noise.shape}"
            )
        z = noise.astype(np.float32)
        m = mask.astype(np.float32)[None, :]
        for i, kind in enumerate(self.kinds):
            if kind == FLIP:
                z = z[::-1].copy()
            elif kind == AFFINE:
                w = self.weights
                z = (z - w[f"flows.{i}.m"]) * w[f"flows.{i}.inv_scale"] * m
            else:
                z = self._conv_flow(i, z, m, cond)
        return z[0]

    def _conv_flow(
        self, i: int, z: np.ndarray, m: np.ndarray, cond: np.ndarray
    ) -> np.ndarray:
        w, p = self.weights, f"flows.{i}."
        x0, x1 = z[:1], z[1:]
        h = conv1x1(x0, w[p + "pre.w"], w[p + "pre.b"]) + cond
        for layer in range(self.dds_layers):
            q = f"{p}dds.{layer}."
            y = depthwise_conv(
                h * m, w[q + "sep.w"], w[q + "sep.b"], int(w[q + "sep.dilation"])
            )
            y = gelu(layer_norm(y, w[q + "ln1.g"], w[q + "ln1.b"], self.ln_eps))
            y = conv1x1(y, w[q + "pw.w"], w[q + "pw.b"])
            y = gelu(layer_norm(y, w[q + "ln2.g"], w[q + "ln2.b"], self.ln_eps))
            h = h + y
        h = conv1x1(h * m, w[p + "proj.w"], w[p + "proj.b"]) * m
        h = h.T  # [t, 3 * bins - 1]: widths, heights, inner derivatives
        nb = self.num_bins
        x1 = spline_inverse(
            x1[0],
            h[:, :nb] / self.bin_scale,
            h[:, nb : 2 * nb] / self.bin_scale,
            h[:, 2 * nb :],
            self.tail_bound,
        )
        return np.concatenate([x0, x1[None, :]], axis=0) * m


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _knots(unnormalized: np.ndarray, floor: float, bound: float) -> np.ndarray:
    """Bin sizes -> knot positions [n, bins + 1] spanning [-bound, bound]."""
    bins = unnormalized.shape[-1]
    sizes = floor + (1.0 - floor * bins) * _softmax(unnormalized)
    knots = np.zeros((sizes.shape[0], bins + 1), dtype=np.float32)
    knots[:, 1:] = np.cumsum(sizes, axis=-1)
    knots = 2.0 * bound * knots - bound
    knots[:, 0], knots[:, -1] = -bound, bound
    return knots


def spline_inverse(
    x: np.ndarray,
    widths: np.ndarray,
    heights: np.ndarray,
    derivs: np.ndarray,
    tail_bound: float,
) -> np.ndarray:
    """Inverse rational-quadratic spline with linear tails (VITS transforms.py).

    x [n]; widths, heights [n, bins]; derivs [n, bins - 1] (inner knots). Outside
    [-tail_bound, tail_bound] the transform is the identity.
    """
    out = x.astype(np.float32).copy()
    inside = (x >= -tail_bound) & (x <= tail_bound)
    if not inside.any():
        return out
    x = x[inside].astype(np.float32)
    # Linear tails: the outer derivatives are pinned so the slope there is 1.
    edge = np.float32(np.log(np.exp(1.0 - MIN_DERIVATIVE) - 1.0))
    d = np.pad(derivs[inside], ((0, 0), (1, 1)), constant_values=edge)
    d = MIN_DERIVATIVE + np.logaddexp(0.0, d).astype(np.float32)
    cw = _knots(widths[inside], MIN_BIN_WIDTH, tail_bound)
    ch = _knots(heights[inside], MIN_BIN_HEIGHT, tail_bound)
    search = ch.copy()
    search[:, -1] += SEARCH_EPS
    idx = (x[:, None] >= search).sum(axis=-1) - 1
    rows = np.arange(x.size)
    x_lo, h_lo = cw[rows, idx], ch[rows, idx]
    bin_w = cw[rows, idx + 1] - x_lo
    bin_h = ch[rows, idx + 1] - h_lo
    delta = bin_h / bin_w
    d_lo, d_hi = d[rows, idx], d[rows, idx + 1]
    # Solve the bin's rational quadratic for theta (Durkan et al., eq. 6-8).
    dy = x - h_lo
    slope_sum = d_lo + d_hi - 2.0 * delta
    a = dy * slope_sum + bin_h * (delta - d_lo)
    b = bin_h * d_lo - dy * slope_sum
    c = -delta * dy
    disc = b * b - 4.0 * a * c
    if (disc < 0).any():
        raise FloatingPointError("spline inverse: negative discriminant")
    theta = (2.0 * c) / (-b - np.sqrt(disc))
    out[inside] = theta * bin_w + x_lo
    return out


def durations(logw: np.ndarray, mask: np.ndarray, length_scale: float) -> np.ndarray:
    """Frames per phoneme: ceil(exp(logw) * length_scale), 0 on padding (int64)."""
    w = np.exp(logw.astype(np.float32)) * mask.astype(np.float32)
    return np.ceil(w * np.float32(length_scale)).astype(np.int64)


def expand_prior(
    m_p: np.ndarray,
    logs_p: np.ndarray,
    frames_per_phoneme: np.ndarray,
    noise: np.ndarray | None,
    noise_scale: float,
) -> np.ndarray:
    """Length regulation + prior sample: z_p [c, frames] for the flow.

    Each phoneme's mean/log-std is repeated for its frames (VITS generate_path +
    matmul, which is a gather since the path has one 1 per frame). A sequence
    with no frames still gets one frame of zeros, as VITS clamps y_lengths >= 1.
    `noise` is N(0, 1) of shape [c, frames] (None = zeros).
    """
    t = m_p.shape[1]
    counts = frames_per_phoneme[:t]
    index = np.repeat(np.arange(t), counts)
    if index.size == 0:
        mean = np.zeros((m_p.shape[0], 1), dtype=np.float32)
        log_std = np.zeros_like(mean)
    else:
        mean, log_std = m_p[:, index], logs_p[:, index]
    if noise is None or noise_scale == 0.0:
        return np.ascontiguousarray(mean, dtype=np.float32)
    if noise.shape != mean.shape:
        raise ValueError(f"noise shape {noise.shape} != prior shape {mean.shape}")
    return (mean + noise * np.exp(log_std) * np.float32(noise_scale)).astype(np.float32)


def frame_count(frames_per_phoneme: np.ndarray) -> int:
    """Frames the flow and decoder will see (VITS: clamp_min(sum, 1))."""
    return max(int(frames_per_phoneme.sum()), 1)
