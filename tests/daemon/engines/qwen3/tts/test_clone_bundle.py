"""Cloning through the tiny Base bundle's speaker_<F> graphs (CPU backend)
against upstream's create_voice_clone_prompt steps on the same clip."""

from __future__ import annotations

from pathlib import Path

import librosa
import numpy as np
import pytest

from daemon.engines.qwen3.tts.clone import XVECTOR, Cloner, speaker_model_id
from daemon.engines.qwen3.tts.params import MEL_BASIS, TtsParams
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cancel import Cancelled, CancelToken
from daemon.sdk.cloning import CloneRequest
from daemon.sdk.graphs import GraphHost
from scripts.common.parity import rel_error

RATE = 24000


@pytest.fixture(scope="module")
def cloner(tiny_tts_base_bundle: Path) -> Cloner:
    bundle = Bundle.load(tiny_tts_base_bundle)
    runners = GraphHost("cpu").open([bundle])[0]
    p = TtsParams.from_mapping(bundle.params)
    basis = np.load(bundle.path(MEL_BASIS))
    return Cloner(p, runners, basis, speaker_model_id(p, bundle.graphs))


@pytest.fixture(scope="module")
def tts(tiny_tts_base: Path):  # type: ignore[no-untyped-def]
    """Upstream's Qwen3TTSModel of the tiny Base checkpoint (the oracle's)."""
    from scripts.qwen3.tts import oracle

    return oracle.load(tiny_tts_base)


def voice(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    return voice_of(int(seconds * rate), rate, seed)


def voice_of(n: int, rate: int, seed: int = 0) -> np.ndarray:
    """n samples of a gliding harmonic voice with a little noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    phase = 2 * np.pi * np.cumsum(110 + 40 * np.sin(2 * np.pi * 0.5 * t)) / rate
    x = sum(np.sin(k * phase) / k for k in range(1, 12)) * 0.2
    return (x + rng.normal(0, 0.01, len(t))).astype(np.float32)


#: upstream's x-vector of the clip itself, every length (the masked graphs;
#: measured 2e-7 on the tiny bundle)
EXACT_REL = 1e-5


def lengths(x) -> list[int]:  # type: ignore[no-untyped-def]
    """24 kHz samples per bucket: the shortest it holds, odd ones, exactly
    the bucket, its last sample, and one sample over (the next bucket)."""
    hop, out, low = x.hop, [], (x.reflect_pad + 1) * x.hop
    for f in x.frame_buckets:
        out += [low, low + 1, (low + f * hop) // 2 | 1, f * hop, (f + 1) * hop - 1]
        low = (f + 1) * hop
    return out


def test_xvector_is_upstreams_at_every_length(cloner, tts) -> None:  # type: ignore[no-untyped-def]
    """Each clip whole, in the smallest bucket holding it, against upstream's
    extract_speaker_embedding of the same (unpadded) clip."""
    from scripts.qwen3.tts import oracle_audio

    x = cloner.xvector.x
    ns = lengths(x)
    assert ns[:2] == [5 * 256, 5 * 256 + 1] and 94 * 256 in ns  # 1 over 93
    for n in ns:
        clip = voice_of(n, RATE, seed=n)
        vp = cloner.clone(CloneRequest(clip, RATE, None))
        frames = n // x.hop
        assert vp.meta["frames"] == frames and vp.meta["start_seconds"] == 0
        holding = min(f for f in x.frame_buckets if f >= frames)
        assert cloner.xvector.bucket(n) == holding
        ref = oracle_audio.speaker_embedding(tts, clip)
        assert rel_error(ref, vp.arrays[XVECTOR]) <= EXACT_REL, n


@pytest.mark.parametrize("rate", [8000, 16000, 22050, 44100, 48000])
def test_xvector_equals_upstream_clone_prompt(cloner, tts, rate) -> None:  # type: ignore[no-untyped-def]
    """A stereo clip at ``rate`` of an odd length between the buckets:
    upstream's whole create_voice_clone_prompt path (librosa.resample,
    extract_speaker_embedding) on the same clip.  Its channel mean is the
    downmix upstream means (a (array, sr) tuple of [n, ch] raises TypeError
    in 0.1.1's _normalize_audio_inputs; a file goes through librosa.load's
    mono=True, the same mean)."""
    from scripts.qwen3.tts import oracle_audio

    x = cloner.xvector.x
    small, large = x.frame_buckets[0], x.frame_buckets[-1]
    n = int((small + large) / 2 * x.hop / RATE * rate) | 1
    clip = voice_of(n, rate, seed=rate)
    stereo = np.stack([clip, clip * 0.5], axis=-1)
    vp = cloner.clone(CloneRequest(stereo, rate, "ignored"))
    assert small < vp.meta["frames"] < large and vp.meta["sample_rate"] == rate
    assert vp.meta["used_seconds"] == round(-(-n * RATE // rate) / RATE, 3)
    ref = oracle_audio.clone_xvector(tts, stereo.mean(axis=-1), rate)
    vec = vp.arrays[XVECTOR]
    assert vec.dtype == np.float32 and vec.shape == (x.dim,)
    assert float(np.abs(ref).max()) > 0.1
    assert rel_error(ref, vec) <= EXACT_REL
    assert vp.engine_id == "qwen3-tts" and vp.model == cloner.model_id


def test_a_longer_clip_is_cut_to_its_loudest_span(cloner, tts) -> None:  # type: ignore[no-untyped-def]
    """Leading silence, then speech longer than the largest bucket, at 44.1
    kHz: the encoder takes the loudest largest-bucket span after resampling,
    which is upstream's embedding of that same span."""
    from scripts.qwen3.tts import oracle_audio

    x = cloner.xvector.x
    top = x.frame_buckets[-1]
    speech = voice(top * x.hop / RATE + 0.4, 44100, seed=1)
    clip = np.concatenate([np.zeros(44100, np.float32), speech])
    vp = cloner.clone(CloneRequest(clip, 44100, None))
    assert 1.0 <= vp.meta["start_seconds"] <= 1.0 + 0.4 + x.hop / RATE
    assert vp.meta["used_seconds"] < vp.meta["seconds"]
    assert vp.meta["frames"] == top
    start = round(vp.meta["start_seconds"] * RATE / x.hop) * x.hop
    pcm24 = librosa.resample(y=clip, orig_sr=44100, target_sr=RATE)
    ref = oracle_audio.speaker_embedding(tts, pcm24[start : start + top * x.hop])
    assert rel_error(ref, vp.arrays[XVECTOR]) <= EXACT_REL


def test_capability_and_too_short_clips(cloner) -> None:  # type: ignore[no-untyped-def]
    """The shortest clip is upstream's own: 5 frames (1280 samples at 24 kHz)."""
    cap = cloner.capability
    assert cap.model == cloner.model_id and cap.transcript == "unused"
    shortest = cloner.xvector.min_seconds
    assert shortest == 5 * 256 / RATE and cap.min_seconds == 0.054
    for rate in (8000, 44100):
        vp = cloner.clone(
            CloneRequest(voice(cap.min_seconds, rate), rate, None)
        )  # the minimum fits
        assert vp.meta["frames"] >= 5
    with pytest.raises(ValueError, match=rf"at least {shortest:.3f} s"):
        cloner.clone(CloneRequest(voice(shortest * 0.9, RATE), RATE, None))


def test_cancel_before_the_graph_call(cloner) -> None:  # type: ignore[no-untyped-def]
    cancel = CancelToken()
    cancel.cancel("stop")
    calls = cloner.xvector.calls
    with pytest.raises(Cancelled, match="stop"):
        cloner.clone(CloneRequest(voice(2.0, RATE), RATE, None), cancel)
    assert cloner.xvector.calls == calls


def test_bad_clip_makes_no_graph_call(cloner) -> None:  # type: ignore[no-untyped-def]
    calls = cloner.xvector.calls
    bad = voice(2.0, RATE)
    bad[100] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cloner.clone(CloneRequest(bad, RATE, None))
    assert cloner.xvector.calls == calls
