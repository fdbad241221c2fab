"""CodecStream on the tiny Base bundle (CPU backend): audio leaves per window,
equal to upstream's decoder on the same windows (the pipeline measures its
window contexts with this same Schedule), and upstream's chunking is upstream's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from daemon.engines.qwen3.tts.codec.decoder import CodecDecoder
from daemon.engines.qwen3.tts.codec.stream import CodecStream, Schedule, decode
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cancel import Cancelled, CancelToken
from daemon.sdk.graphs import GraphHost
from scripts.common.parity import snr_db
from scripts.qwen3.tts import oracle_audio, windows

SPF = 1920
MIN_SNR_DB = 90.0


@pytest.fixture(scope="module")
def opened(tiny_tts_base_bundle: Path) -> tuple[TtsParams, CodecDecoder]:
    bundle = Bundle.load(tiny_tts_base_bundle)
    runners = GraphHost("cpu").open([bundle])[0]
    p = TtsParams.from_mapping(bundle.params)
    return p, CodecDecoder(p, runners)


@pytest.fixture(scope="module")
def codec(tiny_tts_base: Path):  # type: ignore[no-untyped-def]
    """Upstream's Qwen3TTSTokenizer of the tiny checkpoint (the oracle's)."""
    from scripts.qwen3.tts import oracle_audio

    return oracle_audio.load_codec(tiny_tts_base / "speech_tokenizer")


def frames(n: int, codebook: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, codebook, (n, 16))


def steady(p: TtsParams) -> list[tuple[int, int]]:
    return [(w.frames, w.context) for w in p.codec.windows]


def test_first_audio_leaves_after_first_frames(opened) -> None:  # type: ignore[no-untyped-def]
    p, dec = opened
    first = p.codec.first_frames
    stream = CodecStream(p, dec)
    # the first window, two more, and a partial one for finish
    n = stream.schedule.full(2, stream.schedule.full(1, first)) + 1
    leaves = []  # (frames pushed, samples returned)
    for i, f in enumerate(frames(n, p.predictor.vocab)):
        out = stream.push(f)
        leaves += [(i + 1, len(a)) for a in out]
    tail = stream.finish()
    assert leaves[0] == (first, first * SPF)
    assert len(leaves) >= 3 and leaves[-1][0] < n  # audio during, not at the end
    total = sum(s for _, s in leaves) + sum(len(a) for a in tail)
    assert total == n * SPF == stream.samples
    assert stream.finish() == []  # finished: nothing more


@pytest.mark.parametrize("n", [1, 3, 4, 5, 21])
def test_length_is_1920_per_frame(opened, n: int) -> None:  # type: ignore[no-untyped-def]
    p, dec = opened
    wav = decode(p, dec, frames(n, p.predictor.vocab, seed=n), "streaming")
    assert wav.dtype == np.float32 and wav.shape == (n * SPF,)


def test_streaming_equals_upstream_forward_on_the_same_windows(opened, codec) -> None:  # type: ignore[no-untyped-def]
    """Exactness of the runtime, and the measurement it reproduces: log-mel L1
    vs upstream's decode is the pipeline's number for this schedule."""
    p, dec = opened
    c = frames(15, p.predictor.vocab, seed=7)  # ramp, then a partial steady window
    ours = decode(p, dec, c, "streaming")
    forward = lambda g: oracle_audio.decode_plain(codec, g.T)  # noqa: E731
    ref = windows.stream_decode(forward, c.T, steady(p), p.codec.first_frames, SPF)
    assert snr_db(ref, ours) >= MIN_SNR_DB
    whole = oracle_audio.decode(codec, c)
    measured = windows.log_mel_l1(whole, ref)
    assert abs(windows.log_mel_l1(whole, ours) - measured) <= 1e-3


def test_upstream_schedule_is_upstream_decode(opened, codec) -> None:  # type: ignore[no-untyped-def]
    p, dec = opened
    if 325 not in dec.sizes:
        pytest.skip("the bundle has no codec_325 (upstream's 300 + 25)")
    c = frames(20, p.predictor.vocab, seed=3)
    ours = decode(p, dec, c, "upstream")
    assert snr_db(oracle_audio.decode(codec, c), ours) >= MIN_SNR_DB


def test_chunking_with_context_matches_chunked_decode(opened, codec) -> None:  # type: ignore[no-untyped-def]
    """Upstream's procedure with chunk T - 4 / context 4 in codec_<T> (16 in
    the tiny bundle: 3 chunks, the first without context, the last partial)."""
    p, dec = opened
    c = frames(30, p.predictor.vocab, seed=5)
    t = dec.sizes[-1] if dec.sizes[-1] != 325 else dec.sizes[-2]
    ours = decode(p, dec, c, Schedule(t - 4, t, ((t, 4),), t - 4, 4))
    ref = oracle_audio.decode_chunked(codec, c, t - 4, 4)
    assert snr_db(ref, ours) >= MIN_SNR_DB


def test_cancel_stops_before_the_next_graph_call(opened) -> None:  # type: ignore[no-untyped-def]
    p, dec = opened
    cancel = CancelToken()
    stream = CodecStream(p, dec, cancel=cancel)
    c = frames(12, p.predictor.vocab)
    for f in c[: p.codec.first_frames - 1]:
        assert stream.push(f) == []
    calls = dec.calls
    cancel.cancel("client left")
    with pytest.raises(Cancelled, match="client left"):
        stream.push(c[p.codec.first_frames - 1])
    assert dec.calls == calls


def test_push_after_finish_is_an_error(opened) -> None:  # type: ignore[no-untyped-def]
    p, dec = opened
    stream = CodecStream(p, dec)
    assert stream.finish() == []
    with pytest.raises(RuntimeError, match="push after finish"):
        stream.push(frames(1, p.predictor.vocab)[0])


def test_a_frame_of_the_wrong_width_is_refused(opened) -> None:  # type: ignore[no-untyped-def]
    p, dec = opened
    stream = CodecStream(p, dec)
    with pytest.raises(ValueError, match=r"a frame is \[16\] codes .* got \[15\]"):
        stream.push(np.zeros(15, np.int64))
    assert stream.frames == 0
