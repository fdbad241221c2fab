"""GPT-SoVITS audio reaches the wire as upstream's int16 (TTS.py
audio_postprocess: ``(audio * 32768).astype(np.int16)``), clipped."""

from __future__ import annotations

import numpy as np

from daemon.engines.gptsovits.pcm import on_int16_grid, upstream_int16
from daemon.sdk.audio.shaping import to_int16


def _upstream(audio: np.ndarray) -> np.ndarray:
    """Upstream's line, for samples where it is defined (|x * 32768| < 32768)."""
    return (audio * 32768).astype(np.int16)


def _samples() -> np.ndarray:
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, 200_000).astype(np.float32)
    # the edges of the grid: exact steps, half steps, just inside +-1
    steps = np.arange(-32768, 32768, 97, dtype=np.float32) / 32768
    below = np.nextafter(np.float32(1.0), np.float32(0.0))
    edges = np.array([-1.0, -below, below, 0.0, -0.0, 1e-9, -1e-9], np.float32)
    return np.concatenate([x, steps, steps + np.float32(0.5 / 32768), edges])


def test_conversion_is_upstreams_where_upstream_is_defined():
    x = _samples()
    assert np.array_equal(upstream_int16(x), _upstream(x))


def test_the_shared_edge_writes_exactly_those_values():
    """What every protocol does (to_int16) to what the engine yields."""
    x = _samples()
    wire = np.frombuffer(to_int16(on_int16_grid(x)), "<i2")
    assert np.array_equal(wire, _upstream(x))
    assert wire.min() == -32768  # upstream's -1.0


def test_full_scale_is_clipped_not_wrapped():
    """Upstream's cast of 1.0 * 32768 overflows int16; clipped here."""
    x = np.array([1.0, 1.5, -1.5], np.float32)
    assert upstream_int16(x).tolist() == [32767, 32767, -32768]
    assert np.frombuffer(to_int16(on_int16_grid(x)), "<i2").tolist() == [
        32767,
        32767,
        -32768,
    ]


def test_it_differs_from_the_shared_rounding():
    """Why the engine converts itself: round(x * 32767) and trunc(x * 32768)
    disagree by one step on about a quarter of all samples."""
    x = np.random.default_rng(4).uniform(-1, 1, 10_000).astype(np.float32)
    shared = np.frombuffer(to_int16(x), "<i2").astype(int)
    ours = np.frombuffer(to_int16(on_int16_grid(x)), "<i2").astype(int)
    assert 0.2 < (shared != ours).mean() < 0.3
    assert np.abs(shared - ours).max() == 1


def test_the_engine_yields_upstreams_int16_values(cpu_engine):
    from daemon.sdk.tts import SynthesisOptions

    chunks = list(cpu_engine.synthesize("你好。", SynthesisOptions(seed=3)))
    audio = np.concatenate([c.audio for c in chunks])
    q = audio.astype(np.float64) * 32767
    assert np.abs(audio).max() > 0.01 and np.abs(q - np.rint(q)).max() < 1e-2
