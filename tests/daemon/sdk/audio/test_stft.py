"""The front ends' STFT against torch.stft, and its streamed frames against
the whole clip's (the front ends' own parity tests hold each configuration to
its upstream: tests/daemon/engines/qwen3/asr/test_mel.py, qwen3/tts/
test_xvector.py, gptsovits/reference/test_spectrogram.py and test_fbank.py)."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.audio.stft import (
    PERIODIC_HANN,
    POVEY,
    FrameStream,
    Stft,
    magnitude,
    power,
    window,
)

torch = pytest.importorskip("torch")

#: float64 FFTs of the same frames by two libraries: rounding only
MAX_REL_ERR = 1e-12


def signal(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n) / 16000
    x = 0.3 * np.sin(2 * np.pi * 300 * t) + 0.05 * rng.standard_normal(n)
    return x.astype(np.float32)


def torch_stft(x: np.ndarray, n_fft: int, hop: int, win: int, pad: int) -> np.ndarray:
    """[frames, bins] of torch.stft(center=False) after torch's reflect pad."""
    y = torch.from_numpy(x.astype(np.float64))[None, None]
    y = torch.nn.functional.pad(y, (pad, pad), mode="reflect")[0]
    w = torch.hann_window(win, dtype=torch.float64)
    spec = torch.stft(
        y,
        n_fft,
        hop_length=hop,
        win_length=win,
        window=w,
        center=False,
        return_complex=True,
    )
    return spec[0].T.numpy()


def test_windows() -> None:
    hann = torch.hann_window(400, dtype=torch.float64).numpy()
    np.testing.assert_allclose(window(PERIODIC_HANN, 400, 400), hann, atol=1e-15)
    np.testing.assert_allclose(
        window(POVEY, 400, 400), np.hanning(400) ** 0.85, atol=1e-15
    )
    centred = window(PERIODIC_HANN, 800, 1024)
    assert not centred[:112].any() and not centred[912:].any()
    assert np.array_equal(centred[112:912], window(PERIODIC_HANN, 800, 800))
    with pytest.raises(ValueError, match="window 'hamming'"):
        window("hamming", 4, 4)


@pytest.mark.parametrize(
    ("n_fft", "hop", "win", "pad"),
    [
        (400, 160, 400, 200),
        (1024, 256, 1024, 384),
        (1024, 256, 800, 384),
        (2048, 640, 2048, 704),
    ],
)
def test_equals_torch_stft(n_fft: int, hop: int, win: int, pad: int) -> None:
    x = signal(16000 + 77)
    stft = Stft(n_fft, hop, pad=pad, win=win)
    got = stft(x)
    want = torch_stft(x, n_fft, hop, win, pad)
    assert got.shape == want.shape == (stft.frames_of(len(x)), stft.bins)
    assert np.abs(got - want).max() <= MAX_REL_ERR * np.abs(want).max()


def test_frame_counts() -> None:
    kaldi = Stft(512, 160, frame=400, kind=POVEY)
    centred = Stft(400, 160, pad=200)
    for n in range(0, 2000, 7):
        assert kaldi.frames_of(n) == (0 if n < 400 else 1 + (n - 400) // 160)
        assert centred.frames_of(n) == n // 160 + 1
        assert centred.settled(n) == (0 if n < 200 else (n - 200) // 160 + 1)


def test_power_and_magnitude() -> None:
    spec = np.array([3 + 4j, 1e-3j])
    assert power(spec).tolist() == [25.0, 1e-6]
    np.testing.assert_allclose(magnitude(spec, 1e-8), np.sqrt([25 + 1e-8, 1.01e-6]))


def test_kaldi_frames_are_processed_before_the_window() -> None:
    x = signal(1000) + np.float32(0.5)
    stft = Stft(512, 160, frame=400, kind=POVEY, remove_dc=True, preemphasis=0.97)
    f = stft.frames(x)
    f = f - f.mean(axis=1, keepdims=True)
    f = f - 0.97 * np.concatenate([f[:, :1], f[:, :-1]], axis=1)
    want = np.fft.rfft(f * window(POVEY, 400, 400), n=512, axis=-1)
    assert np.array_equal(stft(x), want)
    with pytest.raises(ValueError, match="per-frame processing"):
        FrameStream(stft)


# sample by sample only the short clips
CASES = [(n, c) for n in (50, 199, 200, 400, 4000) for c in (1, 160, 333, 100000)]


@pytest.mark.parametrize(("n", "chunk"), [*CASES, (16123, 160), (16123, 333)])
def test_streamed_frames_are_the_whole_clips(n: int, chunk: int) -> None:
    """Settled frames as they come, the rest once the stream ends."""
    stft = Stft(400, 160, pad=200)
    x = signal(n, seed=n)
    whole = stft(x)
    s, done = FrameStream(stft), 0
    for i in range(0, n, chunk):
        s.push(x[i : i + chunk])
        ready = stft.settled(s.samples)
        if ready > done:
            assert np.array_equal(s.spectrum(done, ready), whole[done:ready])
            done = ready
    assert np.array_equal(s.spectrum(done, len(whole)), whole[done:])
    assert np.array_equal(s.spectrum(0, len(whole)), whole)


def test_a_truncated_stream_is_a_shorter_one() -> None:
    stft = Stft(400, 160, pad=200)
    x = signal(9000, seed=1)
    s = FrameStream(stft)
    s.push(x)
    s.truncate(5000)
    assert s.samples == 5000 and np.array_equal(s.audio, x[:5000])
    assert np.array_equal(s.spectrum(0, 32), stft(x[:5000]))
