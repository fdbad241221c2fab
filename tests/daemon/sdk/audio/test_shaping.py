"""Segment fades/pauses, int16 edge conversion, the output edge's resampling."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from daemon.sdk.audio.shaping import (
    COMMA_PAUSE_S,
    FADE_IN_S,
    FADE_OUT_S,
    Frames,
    SegmentShaper,
    output_resampler,
    raised_cosine,
    shaped_segment,
    to_int16,
)

SR = 32000


def chunked(audio: np.ndarray, size: int) -> Iterator[np.ndarray]:
    """Audio in pieces as an engine yields it."""
    for i in range(0, len(audio), size):
        yield audio[i : i + size]


def _shape(audio: np.ndarray, chunk: int, pause: float = 0.0) -> np.ndarray:
    s = SegmentShaper(SR)
    parts = [s.push(c) for c in chunked(audio, chunk)]
    return np.concatenate(parts + [s.finish(pause)])


@pytest.mark.parametrize("chunk", [1, 7, 320, 5000, 100000])
def test_fades_do_not_depend_on_chunking(chunk):
    x = np.ones(SR // 2, np.float32)
    whole = _shape(x, len(x))
    assert np.array_equal(_shape(x, chunk), whole)
    n_in, n_out = round(FADE_IN_S * SR), round(FADE_OUT_S * SR)
    assert whole[0] < 0.01 and whole[n_in] == 1.0
    assert whole[-1] < 0.01 and whole[-n_out - 1] == 1.0
    assert np.all(np.diff(whole[:n_in]) > 0) and np.all(np.diff(whole[-n_out:]) < 0)


def test_pause_follows_the_fade_out():
    out = _shape(np.ones(SR, np.float32), 1000, pause=COMMA_PAUSE_S)
    assert len(out) == SR + round(COMMA_PAUSE_S * SR)
    assert not out[SR:].any()


def test_segment_shorter_than_the_fades():
    out = _shape(np.ones(100, np.float32), 30)
    assert len(out) == 100 and out.max() < 1.0


def test_raised_cosine_is_symmetric_and_bounded():
    w = raised_cosine(64)
    assert np.allclose(w, 1 - w[::-1], atol=1e-6) and 0 < w[0] < w[-1] < 1


def test_int16_clips_and_is_little_endian():
    pcm = to_int16(np.array([0.0, 1.0, -1.0, 2.0, -3.0, 0.5], np.float32))
    vals = np.frombuffer(pcm, "<i2")
    assert vals.tolist() == [0, 32767, -32767, 32767, -32768, 16384]


def test_int16_keeps_every_in_range_sample_as_before():
    """Clipping after scaling changes nothing in [-1, 1]: only below -1 does
    -32768 become reachable."""
    x = np.random.default_rng(0).uniform(-1, 1, 100_000).astype(np.float32)
    x[:2] = -1.0, 1.0
    before = np.rint(np.clip(x, -1.0, 1.0) * 32767).astype("<i2")
    assert np.frombuffer(to_int16(x), "<i2").tolist() == before.tolist()


@pytest.mark.parametrize("out_rate", [24000, 22050, 16000])
def test_streaming_resampler_has_no_seams(out_rate):
    t = np.arange(SR) / SR
    x = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    whole = output_resampler(SR, out_rate).push(x, last=True)
    r = output_resampler(SR, out_rate)
    pieces = [r.push(c) for c in chunked(x, 777)] + [
        r.push(np.zeros(0, np.float32), last=True)
    ]
    streamed = np.concatenate(pieces)
    assert abs(len(streamed) - out_rate) <= 1 and len(streamed) == len(whole)
    np.testing.assert_allclose(streamed, whole, atol=1e-5)
    ref = 0.5 * np.sin(2 * np.pi * 440 * np.arange(len(streamed)) / out_rate)
    mid = slice(out_rate // 10, -out_rate // 10)
    assert np.abs(streamed[mid] - ref[mid]).max() < 1e-2


def test_same_rate_passes_through_and_bad_rate_is_refused():
    x = np.ones(10, np.float32)
    assert output_resampler(SR, SR).push(x) is not None
    with pytest.raises(ValueError, match="expected one of"):
        output_resampler(SR, 44100)


def test_shaped_segment_streams_fades_and_ends_with_its_pause():
    x = np.ones(SR // 2, np.float32)
    chunks = list(shaped_segment(chunked(x, 4000), SR, 3, COMMA_PAUSE_S))
    assert [c.end_of_segment for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert {c.segment for c in chunks} == {3} and {c.sample_rate for c in chunks} == {
        SR
    }
    audio = np.concatenate([c.audio for c in chunks])
    assert np.array_equal(audio, _shape(x, len(x), pause=COMMA_PAUSE_S))


def test_frames_are_fixed_size_across_pieces_and_flush_the_rest() -> None:
    frames = Frames(4)
    got = [frames.push(b"abc"), frames.push(b"defghij"), frames.push(b"")]
    assert got == [[], [b"abcd", b"efgh"], []]
    assert frames.flush() == b"ij" and frames.flush() == b""
    assert frames.push(b"12345678") == [b"1234", b"5678"]  # starts afresh
