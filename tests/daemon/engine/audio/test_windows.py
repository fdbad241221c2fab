"""Window schedule for static vocoder graphs, and stitching vs a full decode."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engine.audio.windows import (
    OVERLAP_FRAMES,
    WINDOW_FRAMES,
    Window,
    decode_windowed,
    windows,
)
from daemon.engines.piper.cpu import durations, expand_prior
from scripts.common.parity import snr_db


@pytest.mark.parametrize("n", [1, 5, 95, 96, 97, 150, 168, 169, 240, 577, 1000])
def test_windows_tile_the_sequence_with_context(n: int) -> None:
    wins = list(windows(n))
    kept = []
    for w in wins:
        assert 0 <= w.start < w.stop <= n
        assert 0 <= w.keep_from < w.keep_to <= w.stop - w.start
        if n >= WINDOW_FRAMES:
            assert w.stop - w.start == WINDOW_FRAMES  # clamped, never padded
            # every kept frame has `overlap` real frames each side, except at the
            # sequence edges
            assert w.keep_from >= OVERLAP_FRAMES or w.start == 0
            assert (w.stop - w.start) - w.keep_to >= OVERLAP_FRAMES or w.stop == n
        kept.extend(range(w.start + w.keep_from, w.start + w.keep_to))
    assert kept == list(range(n))


def test_short_sequence_is_one_partial_window() -> None:
    assert list(windows(40)) == [Window(0, 40, 0, 40)]


def test_edge_window_is_clamped_not_padded() -> None:
    last = list(windows(100))[-1]
    assert last == Window(4, 100, 68, 96)


def test_custom_sizes() -> None:
    wins = list(windows(300, window=128, overlap=32))
    assert all(w.stop - w.start == 128 for w in wins)
    assert wins[0].keep_to == 64 and wins[-1].stop == 300


@pytest.mark.parametrize(
    "n, window, overlap", [(0, 96, 12), (-3, 96, 12), (10, 24, 12), (10, 0, 0)]
)
def test_bad_schedule_is_rejected(n: int, window: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        list(windows(n, window, overlap))


def test_decoder_returning_wrong_length_is_an_error() -> None:
    frames = np.zeros((4, 10), np.float32)
    with pytest.raises(ValueError, match="expected 960"):
        list(decode_windowed(frames, lambda z, m: np.zeros(5), hop=10))


def test_frames_must_be_two_dimensional() -> None:
    with pytest.raises(ValueError, match="channels, n"):
        list(decode_windowed(np.zeros(10, np.float32), lambda z, m: z, hop=1))


def test_decoder_sees_zero_padding_and_mask_for_short_input() -> None:
    seen = []

    def decode(z: np.ndarray, mask: np.ndarray) -> np.ndarray:
        seen.append((z.copy(), mask.copy()))
        return np.repeat(z[0], 2)

    frames = np.arange(1, 11, dtype=np.float32)[None, :]
    (chunk,) = list(decode_windowed(frames, decode, hop=2))
    z, mask = seen[0]
    assert mask.sum() == 10 and mask[:10].all()
    assert not z[:, 10:].any()
    np.testing.assert_array_equal(chunk, np.repeat(frames[0], 2))


# --- stitching with the real Piper HiFiGAN (onnxruntime, fp32) -----------------

# Phoneme ids of "Hello world." (piper-tts, en_US-joe-medium) and a filler phrase.
HELLO_IDS = [1, 0, 20, 0, 59, 0, 24, 0, 120, 0, 27, 0, 100, 0, 3, 0, 35, 0, 120, 0]
HELLO_IDS += [62, 0, 122, 0, 24, 0, 17, 0, 10, 0, 2]
FILLER_IDS = [3, 0, 41, 0, 74, 0, 31, 0] * 12


class _PiperParts:
    """The bundle's graphs on the CPU backend, plus its dec_W96 as a DecodeFn."""

    def __init__(self, pipeline, runners) -> None:  # type: ignore[no-untyped-def]
        self.pipeline, self.runner = pipeline, runners["dec_W96"]
        self.encode, self.flow, self.sdp = pipeline.encode, pipeline.flow, pipeline.sdp
        self.hop = pipeline.params.hop

    def decode_window(self, z: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feed = {"z": z[None], "frame_mask": mask.reshape(1, 1, -1)}
        return self.runner.run(feed)[0]


@pytest.fixture(scope="session")
def piper_decoders(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    """The bundle's windowed decoder and the voice's whole-sequence decoder."""
    from tests.piper_bundles import cpu_parts

    with cpu_parts(pytestconfig, "decoder_dynamic") as (pipeline, runners, session):
        yield _PiperParts(pipeline, runners), session


@pytest.mark.parametrize("n", [20, 96, 97, 250])
def test_stitched_windows_equal_full_decode(piper_decoders, n: int) -> None:  # type: ignore[no-untyped-def]
    piper, full = piper_decoders
    # a real latent: the flow's output for a sentence, cut to n frames
    m_p, logs_p, cond = piper.encode(np.array(HELLO_IDS + FILLER_IDS))
    mask = np.ones(m_p.shape[1], np.float32)
    per = durations(piper.sdp.logw(cond, mask, np.zeros((2, mask.size))), mask, 1.0)
    z = piper.flow(expand_prior(m_p, logs_p, per, None, 0.0))
    assert z.shape[1] >= n
    z = np.ascontiguousarray(z[:, :n])
    ref = full.run(None, {"z": z[None]})[0].reshape(-1)
    got = np.concatenate(list(decode_windowed(z, piper.decode_window, piper.hop)))
    assert got.shape == ref.shape == (n * piper.hop,)
    assert snr_db(ref, got) >= 100.0


def test_without_frame_mask_short_windows_are_wrong(piper_decoders) -> None:  # type: ignore[no-untyped-def]
    """The mask is what makes a short window exact: zero padding alone is not."""
    piper, full = piper_decoders
    z = np.random.default_rng(0).standard_normal((192, 30)).astype(np.float32)
    ref = full.run(None, {"z": z[None]})[0].reshape(-1)
    unmasked = np.concatenate(
        list(
            decode_windowed(
                z, lambda w, m: piper.decode_window(w, np.ones_like(m)), piper.hop
            )
        )
    )
    masked = np.concatenate(list(decode_windowed(z, piper.decode_window, piper.hop)))
    assert snr_db(ref, unmasked) < 40.0 < 100.0 <= snr_db(ref, masked)
