"""numpy CPU parts of a Piper voice vs the voice's own ONNX (onnxruntime) as oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from daemon.engines.piper.cpu import (
    MIN_BIN_HEIGHT,
    MIN_BIN_WIDTH,
    MIN_DERIVATIVE,
    DurationPredictor,
    durations,
    expand_prior,
    frame_count,
    gelu,
    spline_inverse,
)


def test_gelu_is_exact_erf_gelu() -> None:
    x = np.array([-3.0, -1.0, -0.1, 0.0, 0.5, 2.0], np.float32)
    want = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()]
    np.testing.assert_allclose(gelu(x), want, rtol=1e-6, atol=1e-7)
    assert gelu(x).dtype == np.float32


def _spline_forward(x, uw, uh, ud, bound):  # type: ignore[no-untyped-def]
    """Forward rational-quadratic spline, written from Durkan et al. 2019."""

    def knots(u, floor):  # type: ignore[no-untyped-def]
        s = np.exp(u - u.max(-1, keepdims=True))
        s = floor + (1 - floor * u.shape[-1]) * s / s.sum(-1, keepdims=True)
        k = np.concatenate([np.zeros((len(u), 1)), np.cumsum(s, -1)], -1)
        k = 2 * bound * k - bound
        k[:, 0], k[:, -1] = -bound, bound
        return k

    cw, ch = knots(uw, MIN_BIN_WIDTH), knots(uh, MIN_BIN_HEIGHT)
    edge = np.log(np.exp(1 - MIN_DERIVATIVE) - 1)
    d = MIN_DERIVATIVE + np.log1p(
        np.exp(np.pad(ud, ((0, 0), (1, 1)), constant_values=edge))
    )
    i = np.array(
        [np.searchsorted(cw[r], x[r], side="right") - 1 for r in range(len(x))]
    )
    r = np.arange(len(x))
    w, h = cw[r, i + 1] - cw[r, i], ch[r, i + 1] - ch[r, i]
    s = h / w
    th = (x - cw[r, i]) / w
    num = h * (s * th**2 + d[r, i] * th * (1 - th))
    den = s + (d[r, i] + d[r, i + 1] - 2 * s) * th * (1 - th)
    return ch[r, i] + num / den


def test_spline_inverse_undoes_the_forward_spline() -> None:
    rng = np.random.default_rng(0)
    n, bins, bound = 400, 10, 5.0
    x = rng.uniform(-bound + 1e-3, bound - 1e-3, n)
    uw, uh = rng.normal(size=(n, bins)), rng.normal(size=(n, bins))
    ud = rng.normal(size=(n, bins - 1))
    y = _spline_forward(x, uw, uh, ud, bound).astype(np.float32)
    back = spline_inverse(y, uw.astype(np.float32), uh.astype(np.float32), ud, bound)
    np.testing.assert_allclose(back, x, atol=2e-4)


def test_spline_inverse_is_identity_outside_the_tails() -> None:
    x = np.array([-9.0, -5.5, 5.01, 40.0], np.float32)
    z = np.zeros((4, 10), np.float32)
    np.testing.assert_array_equal(spline_inverse(x, z, z, z[:, :9], 5.0), x)


def test_durations_ceil_mask_and_scale() -> None:
    logw = np.log(np.array([0.2, 1.0, 2.25, 3.0], np.float32))
    mask = np.array([1, 1, 1, 0], np.float32)
    np.testing.assert_array_equal(durations(logw, mask, 1.0), [1, 1, 3, 0])
    np.testing.assert_array_equal(durations(logw, mask, 2.0), [1, 2, 5, 0])


def test_expand_prior_repeats_each_phoneme_for_its_frames() -> None:
    m_p = np.array([[1.0, 2.0, 3.0]], np.float32)
    logs_p = np.log(np.array([[1.0, 2.0, 4.0]], np.float32))
    per = np.array([2, 0, 3])
    np.testing.assert_array_equal(
        expand_prior(m_p, logs_p, per, None, 0.0), [[1, 1, 3, 3, 3]]
    )
    noise = np.ones((1, 5), np.float32)
    got = expand_prior(m_p, logs_p, per, noise, 0.5)
    np.testing.assert_allclose(got, [[1.5, 1.5, 5, 5, 5]], rtol=1e-6)
    assert frame_count(per) == 5


def test_expand_prior_with_no_frames_gives_one_silent_frame() -> None:
    m_p = np.ones((2, 3), np.float32)
    per = np.zeros(3, np.int64)
    assert frame_count(per) == 1
    np.testing.assert_array_equal(
        expand_prior(m_p, m_p, per, None, 0.0), np.zeros((2, 1))
    )


def test_expand_prior_rejects_wrong_noise_shape() -> None:
    m_p = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="noise shape"):
        expand_prior(m_p, m_p, np.array([1, 1, 1]), np.zeros((2, 4), np.float32), 0.5)


def test_bad_weight_arrays_are_rejected() -> None:
    with pytest.raises(ValueError, match="missing"):
        DurationPredictor.from_arrays({"kinds": np.array(["flip"])})
    arrays = {k: np.array(1.0) for k in ("num_bins", "tail_bound", "bin_scale")}
    arrays.update(
        ln_eps=np.array(1e-5), dds_layers=np.array(3), kinds=np.array(["warp"])
    )
    with pytest.raises(ValueError, match="unknown SDP flow kinds"):
        DurationPredictor.from_arrays(arrays)


# --- the real voice: numpy SDP vs the voice's own flows ------------------------


@pytest.fixture(scope="session")
def sdp_pair(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    """(numpy DurationPredictor, onnxruntime session of the voice's SDP, graphs)."""
    from tests.piper_bundles import cpu_parts

    with cpu_parts(pytestconfig, "sdp_dynamic") as (pipeline, _, session):
        yield pipeline.sdp, session, pipeline


@pytest.mark.parametrize("t, noise_w", [(7, 0.0), (60, 0.0), (60, 0.8), (200, 1.5)])
def test_sdp_matches_the_voice_graph(sdp_pair, t: int, noise_w: float) -> None:  # type: ignore[no-untyped-def]
    port, session, piper = sdp_pair
    rng = np.random.default_rng(t)
    ids = rng.integers(0, 130, t)
    _, _, cond = piper.encode(ids)
    mask = np.ones(t, np.float32)
    noise = (rng.standard_normal((2, t)) * noise_w).astype(np.float32)
    feed = {
        "dp_cond": cond[None],
        "x_mask": mask.reshape(1, 1, t),
        "noise": noise[None],
    }
    ref = session.run(None, feed)[0][0, 0]
    got = port.logw(cond, mask, noise)
    assert got.shape == (t,)
    np.testing.assert_allclose(got, ref, atol=1e-4)


def test_sdp_rejects_mismatched_shapes(sdp_pair) -> None:  # type: ignore[no-untyped-def]
    port, _, _ = sdp_pair
    cond = np.zeros((192, 10), np.float32)
    with pytest.raises(ValueError, match="noise \\[2, t\\]"):
        port.logw(cond, np.ones(10, np.float32), np.zeros((2, 9), np.float32))


def test_sdp_ignores_padding_positions(sdp_pair) -> None:  # type: ignore[no-untyped-def]
    port, _, piper = sdp_pair
    rng = np.random.default_rng(3)
    _, _, cond = piper.encode(rng.integers(0, 130, 40))
    noise = rng.standard_normal((2, 48)).astype(np.float32)
    padded_cond = np.concatenate(
        [cond, rng.standard_normal((cond.shape[0], 8))], axis=1
    )
    mask = np.r_[np.ones(40), np.zeros(8)].astype(np.float32)
    full = port.logw(padded_cond.astype(np.float32), mask, noise)
    short = port.logw(cond, np.ones(40, np.float32), noise[:, :40])
    np.testing.assert_allclose(full[:40], short, atol=1e-5)
