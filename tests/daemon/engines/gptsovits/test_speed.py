"""The stretch matrix against torch's F.interpolate (upstream's speed), lengths,
and the fits arithmetic for slow speech."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.gptsovits import speed

torch = pytest.importorskip("torch")
F = torch.nn.functional

# Upstream's range ends (0.6, 1.65) and speeds in between.
SPEEDS = (0.6, 0.65, 0.8, 0.95, 1.05, 1.25, 1.5, 1.65)
# FR of the full-size graphs (scripts/gptsovits/shapes.py FULL.vits_frames).
FULL_FRAMES = 500


@pytest.mark.parametrize("sp", [0.6, 0.8, 1.25, 1.65])
def test_weights_are_torch_linear_interpolation_bit_for_bit(sp: float):
    """Lengths across the full-size graph (every 2N was checked once; a stride
    keeps the test quick): upstream's F.interpolate(y, size=int(T / speed) + 1,
    mode="linear") of an identity is the matrix itself, so the weights must be
    identical."""
    worst = 0.0
    for frames in range(2, FULL_FRAMES + 1, 6):
        out = speed.stretched_frames(frames, sp)
        if out > FULL_FRAMES:
            break
        eye = torch.eye(frames).unsqueeze(0)
        want = F.interpolate(eye, size=int(frames / sp) + 1, mode="linear")[0]
        size = max(frames, out)  # the smallest graph that holds both
        got = np.zeros((size, size), np.float32)
        assert speed.fill_stretch(got, frames, sp) == out == want.shape[1]
        worst = max(worst, float(np.abs(got[:frames, :out] - want.numpy()).max()))
        assert not got[frames:].any() and not got[:, out:].any()
    assert worst == 0.0


def test_speed_one_is_the_identity_and_no_extra_frame():
    m = np.full((8, 8), 7.0, np.float32)
    assert speed.fill_stretch(m, 6, 1.0) == 6
    want = np.zeros((8, 8), np.float32)
    want[range(6), range(6)] = 1.0
    assert np.array_equal(m, want)


@pytest.mark.parametrize(
    ("tokens", "sp", "frames"),
    # docs/gpt-sovits.md, SoVITS decode, step 7, verified upstream: N = 10
    # gives 12800 samples at 1, 10880 at 1.25, 16640 at 0.8 (x 640 per frame)
    [(10, 1.0, 20), (10, 1.25, 17), (10, 0.8, 26), (7, 0.6, 24), (7, 1.65, 9)],
)
def test_stretched_frames_as_upstream(tokens: int, sp: float, frames: int):
    assert speed.stretched_frames(2 * tokens, sp) == frames


def test_slow_speech_fits_fewer_tokens():
    fr = FULL_FRAMES
    assert speed.max_tokens(fr, 2, 1.0) == fr // 2
    for sp in SPEEDS:
        n = speed.max_tokens(fr, 2, sp)
        assert speed.stretched_frames(2 * n, sp) <= fr
        assert n == fr // 2 or speed.stretched_frames(2 * (n + 1), sp) > fr
    assert speed.max_tokens(fr, 2, speed.MIN_SPEED) == 149  # int(298/0.6)+1 = 497


def test_unusable_requests_are_refused():
    m = np.zeros((20, 20), np.float32)
    with pytest.raises(ValueError, match="26 frames; the vits_enc graph holds 20"):
        speed.fill_stretch(m, 20, 0.8)
    with pytest.raises(ValueError, match="at least one latent frame"):
        speed.stretched_frames(0, 1.0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive finite"):
            speed.stretched_frames(4, bad)


def test_the_engine_speaks_upstreams_range_and_lengths(cpu_engine):
    """One segment, same seed: T2S draws come first, so the tokens (N) are the
    same at every speed and the audio is (int(2N / speed) + 1) x 640 samples.
    (The tiny test model never stops by itself: a max_new_tokens below every
    speed's cap fixes N; one unsplittable segment keeps its capped tokens.)"""
    from daemon.sdk.tts import SynthesisOptions

    assert cpu_engine.capabilities().speed_range == (0.6, 1.65)
    n, hop = 20, cpu_engine.loaded.params.hop

    def samples(sp: float) -> int:
        opts = SynthesisOptions(seed=11, speed=sp, extra={"max_new_tokens": n})
        chunks = list(cpu_engine.synthesize("你好。", opts))
        assert {c.segment for c in chunks} == {0}
        return sum(len(c.audio) for c in chunks)

    assert samples(1.0) == 2 * n * hop
    for sp in (0.8, 1.25):
        assert samples(sp) == (int(2 * n / sp) + 1) * hop


def test_slow_requests_get_the_cap_that_fits(cpu_engine):
    """Below speed 1 a segment may hold only the tokens whose stretched frames
    fit vits_frames; an explicit max_new_tokens above that is lowered to it."""
    from daemon.engines.gptsovits.options import Request
    from daemon.sdk.tts import SynthesisOptions

    s, cap = cpu_engine.loaded, cpu_engine.token_cap

    def max_tokens(sp: float, **extra) -> int:
        opts = SynthesisOptions(speed=sp, extra=extra)
        voice = cpu_engine.default_voice
        return Request.from_options(opts, s.params, s.voices, voice, cap).max_tokens

    assert max_tokens(1.0) == max_tokens(1.65) == cap
    assert max_tokens(0.6) == s.vits.max_tokens_at(0.6) < cap
    assert max_tokens(0.6, max_new_tokens=cap) == s.vits.max_tokens_at(0.6)
    assert max_tokens(0.6, max_new_tokens=5) == 5
