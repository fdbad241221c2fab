"""The codec_<T> graphs of the tiny Base bundle (CPU backend) against upstream's
decoder forward on the same frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from daemon.engines.qwen3.tts.codec.decoder import CodecDecoder
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.graphs import GraphHost, Runner
from scripts.common.parity import snr_db

SPF = 1920
#: the codec parity bound for our output vs upstream's on the same windows
MIN_SNR_DB = 90.0


@pytest.fixture(scope="module")
def opened(tiny_tts_base_bundle: Path) -> tuple[TtsParams, dict[str, Runner]]:
    bundle = Bundle.load(tiny_tts_base_bundle)
    runners = GraphHost("cpu").open([bundle])[0]
    return TtsParams.from_mapping(bundle.params), runners


@pytest.fixture(scope="module")
def upstream_forward(tiny_tts_base: Path):  # type: ignore[no-untyped-def]
    """One forward of upstream's decoder over [n, 16] codes (the oracle)."""
    from scripts.qwen3.tts import oracle_audio

    codec = oracle_audio.load_codec(tiny_tts_base / "speech_tokenizer")
    return lambda c: oracle_audio.decode_plain(codec, c)


def codes(n: int, codebook: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, codebook, (n, 16))


@pytest.mark.parametrize(("which", "fill"), [(0, 1.0), (0, 0.6), (-1, 1.0), (-1, 0.0)])
def test_window_equals_upstream_forward(opened, upstream_forward, which, fill) -> None:  # type: ignore[no-untyped-def]
    """A partial window runs right-padded: its samples are the decode of its
    frames alone (the codec is causal).  Smallest and largest window graph,
    full, partial, one frame."""
    p, runners = opened
    dec = CodecDecoder(p, runners)
    graph = sorted(w.frames for w in p.codec.windows)[which]
    n = max(1, round(fill * graph))
    c = codes(n, p.predictor.vocab, seed=n)
    wav = dec.decode(c, graph)
    ref = upstream_forward(c)
    assert wav.dtype == np.float32 and wav.shape == (n * SPF,) == ref.shape
    assert float(np.std(ref)) > 0.01  # the tiny codec says something
    assert snr_db(ref, wav) >= MIN_SNR_DB
    assert dec.calls == 1 and dec.graph_seconds > 0


def test_negative_codes_are_clamped_as_upstream_decode(opened) -> None:  # type: ignore[no-untyped-def]
    p, runners = opened
    dec = CodecDecoder(p, runners)
    t = dec.sizes[0]
    c = codes(t, p.predictor.vocab)
    c[t // 2, 3] = -1
    zero = c.copy()
    zero[t // 2, 3] = 0
    assert np.array_equal(dec.decode(c, t), dec.decode(zero, t))


def test_bad_windows_are_refused(opened) -> None:  # type: ignore[no-untyped-def]
    p, runners = opened
    dec = CodecDecoder(p, runners)
    vc, t = p.predictor.vocab, dec.sizes[0]
    with pytest.raises(ValueError, match=rf"code {vc} is outside the codebook"):
        dec.decode(np.full((t, 16), vc), t)
    with pytest.raises(ValueError, match=rf"a window holds 1..{t} frames, got {t + 1}"):
        dec.decode(codes(t + 1, vc), t)
    with pytest.raises(ValueError, match=r"codes must be \[n, 16\]"):
        dec.decode(np.zeros((t, 15), np.int64), t)
    absent = dec.sizes[-1] + 1
    with pytest.raises(BundleError, match=rf"no graph 'codec_{absent}'.*'codec_{t}'"):
        dec.decode(codes(1, vc), absent)
    assert dec.calls == 0


def test_graph_sizes_come_from_the_runners(opened) -> None:  # type: ignore[no-untyped-def]
    p, runners = opened
    t = max(w.frames for w in p.codec.windows)
    only = {k: v for k, v in runners.items() if k != f"codec_{t}"}
    dec = CodecDecoder(p, only)
    assert t not in dec.sizes and t in CodecDecoder(p, runners).sizes
    with pytest.raises(BundleError, match=f"'codec_{t}'"):
        dec.require(t)
