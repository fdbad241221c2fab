"""The qwen3-tts engine on the tiny bundles (CPU backend): voices and
capabilities from the checkpoint, audio streamed per codec window, seeds,
pieces of long text, cancel, cloning, refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from daemon.engines.qwen3.tts.engine import Qwen3TtsEngine
from daemon.engines.qwen3.tts.graphio import graph_needs
from daemon.engines.qwen3.tts.text.pieces import pieces
from daemon.sdk.audio.shaping import SENTENCE_PAUSE_S
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cancel import Cancelled
from daemon.sdk.local import LocalEngine, open_engine
from daemon.sdk.registry import engine_class
from daemon.sdk.tts import AudioChunk, SynthesisOptions
from tests.cancel_after import CancelAfter

TEXT = "今天天气很好，我们去公园散步吧。"  # tiny.TEXTS["zh"]: greedy ends by EOS
SPF = 1920


@pytest.fixture(scope="module")
def custom(tiny_tts_custom_bundle: Path) -> Iterator[LocalEngine]:
    with open_engine(tiny_tts_custom_bundle, "cpu", warmup=True) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def base(tiny_tts_base_bundle: Path) -> Iterator[LocalEngine]:
    with open_engine(tiny_tts_base_bundle, "cpu") as loaded:
        yield loaded


def greedy(extra: dict | None = None, **kw) -> SynthesisOptions:  # type: ignore[no-untyped-def]
    return SynthesisOptions(
        language="chinese", extra={"greedy": True, **(extra or {})}, **kw
    )


def audio(chunks: list[AudioChunk]) -> np.ndarray:
    return np.concatenate([c.audio for c in chunks])


def test_registered() -> None:
    assert engine_class("qwen3-tts") is Qwen3TtsEngine


def test_custom_voice_voices_and_capabilities(
    custom: LocalEngine, tiny_tts_custom_bundle: Path
) -> None:
    e = custom.engine
    p = e.model.p
    assert [v.name for v in e.voices()] == ["aiden", "dylan", "eric", "ryan", "serena"]
    assert all(v.languages == ("zh", "en", "ja", "ko") for v in e.voices())
    caps = e.capabilities()
    assert caps.task == "tts" and caps.sample_rate_out == 24000 == e.sample_rate
    assert caps.speakers == tuple(p.speakers) and caps.speed_range is None
    assert caps.streaming and caps.cloning is None
    for spelling in ("zh", "en", "chinese", "English", "auto"):
        assert spelling in caps.languages
    assert not any("dialect" in lang for lang in caps.languages)
    bundle = Bundle.load(tiny_tts_custom_bundle)
    assert Qwen3TtsEngine.requirements(bundle) == graph_needs(p)


def test_base_is_one_voice_that_clones(base: LocalEngine) -> None:
    e = base.engine
    (voice,) = e.voices()
    assert voice.name == "qwen3-tts-tiny-base"
    caps = e.capabilities()
    assert caps.speakers == () and caps.cloning is not None
    assert caps.cloning.transcript == "unused"


def test_audio_streams_per_codec_window(custom: LocalEngine) -> None:
    """First audio after first_frames frames, long before the end; all of it
    is 1920 samples a frame of the same frames the greedy run gives."""
    e = custom.engine
    m = e.model
    codes = m.greedy(TEXT, greedy(voice="aiden"))
    stats = m.stats
    seen = []
    chunks = []
    start = stats.steps
    for chunk in e.synthesize(TEXT, greedy(voice="aiden")):
        seen.append(stats.steps - start)
        chunks.append(chunk)
    assert chunks[-1].end_of_segment and all(c.segment == 0 for c in chunks)
    assert all(c.sample_rate == 24000 and c.audio.dtype == np.float32 for c in chunks)
    n = len(codes)
    assert n > 2 * m.p.codec.first_frames
    assert len(audio(chunks)) == SPF * n
    first = next(i for i, c in enumerate(chunks) if len(c.audio))
    assert seen[first] <= m.p.codec.first_frames + 1 < n  # not at the end
    assert len([c for c in chunks if len(c.audio)]) >= 3  # window by window
    assert np.abs(audio(chunks)).max() > 1e-3  # not silence


def test_audio_is_the_codecs_own_without_fades(custom: LocalEngine) -> None:
    """Upstream fades nothing: the engine's samples are its codec schedule's,
    bit for bit, first 10 ms and last 40 ms included."""
    from daemon.engines.qwen3.tts.codec.stream import decode

    e = custom.engine
    m = e.model
    codes = m.greedy(TEXT, greedy(voice="aiden"))
    want = decode(m.p, m.codec, np.asarray(codes), "streaming")
    got = audio(list(e.synthesize(TEXT, greedy(voice="aiden"))))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_voices_say_how_close_streamed_audio_is(custom: LocalEngine) -> None:
    snr = custom.engine.model.p.codec.stream_snr_db
    assert snr is not None
    for v in custom.engine.voices():
        assert f"streamed audio {snr:.1f} dB SNR from upstream's decode" in (
            v.description or ""
        )


def test_a_seed_gives_the_same_bytes(custom: LocalEngine) -> None:
    e = custom.engine

    def run(seed: int) -> bytes:
        opts = SynthesisOptions(voice="ryan", seed=seed, extra={"max_new_tokens": 12})
        return audio(list(e.synthesize(TEXT, opts))).tobytes()

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_long_text_is_spoken_in_pieces(custom: LocalEngine) -> None:
    e = custom.engine
    m = e.model
    long = "Hello there, how are you today? " * 12
    request = m.request(greedy(voice="ryan"))
    assert not m.fits(long.strip(), request)
    chunks = list(e.synthesize(long, greedy(voice="ryan", extra={"max_new_tokens": 6})))
    segments = sorted({c.segment for c in chunks})
    assert len(segments) > 1 and segments == list(range(len(segments)))
    ends = [c for c in chunks if c.end_of_segment]
    assert [c.segment for c in ends] == segments
    # each piece: whole frames (at most 5), then its pause (none after the last)
    parts = pieces(long, lambda t: m.fits(t, request))
    assert len(parts) == len(segments) and all(t.endswith("?") for t in parts)
    for seg in segments:
        n = sum(len(c.audio) for c in chunks if c.segment == seg)
        pause = 0 if seg == segments[-1] else round(SENTENCE_PAUSE_S * 24000)
        assert (n - pause) % SPF == 0 and 0 < (n - pause) // SPF <= 5


def test_cancel_stops_between_graph_calls(custom: LocalEngine) -> None:
    with pytest.raises(Cancelled):
        for _ in custom.engine.synthesize(TEXT, greedy(voice="ryan"), CancelAfter(30)):
            pass


def test_a_clone_speaks(base: LocalEngine) -> None:
    e = base.engine
    t = np.arange(2 * 24000) / 24000
    clip = (0.3 * np.sin(2 * np.pi * 220 * t) * (1 + np.sin(2 * np.pi * 3 * t))).astype(
        np.float32
    )
    vp = e.clone(clip, 24000)
    assert vp.engine_id == "qwen3-tts" and vp.arrays["xvector"].shape == (64,)
    assert vp.model == e.capabilities().cloning.model
    with_clone = e.model.greedy(TEXT, greedy(voice_print=vp))
    without = e.model.greedy(TEXT, greedy())
    assert len(with_clone) and not np.array_equal(with_clone[:3], without[:3])
    chunks = list(
        e.synthesize(TEXT, greedy(voice_print=vp, extra={"max_new_tokens": 8}))
    )
    assert len(audio(chunks)) == SPF * min(len(with_clone), 7)  # the same run, cut


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        ("  ", SynthesisOptions(), "qwen3-tts: no text to speak"),
        (TEXT, SynthesisOptions(language="fr"), "unsupported language 'fr'"),
        (TEXT, SynthesisOptions(speaker="nobody"), "unknown speaker 'nobody'"),
    ],
)
def test_refusals_before_any_graph_runs(
    custom: LocalEngine, text: str, options: SynthesisOptions, message: str
) -> None:
    calls = sum(r.stats.calls for r in custom.graphs.values())
    with pytest.raises(ValueError, match="qwen3-tts") as err:
        custom.engine.synthesize(text, options)
    assert message in str(err.value)
    assert sum(r.stats.calls for r in custom.graphs.values()) == calls


def test_custom_voice_does_not_clone(custom: LocalEngine) -> None:
    with pytest.raises(ValueError, match="a CustomVoice bundle does not clone"):
        custom.engine.clone(np.zeros(24000, np.float32), 24000)


def test_warmup_ran_every_graph(custom: LocalEngine) -> None:
    assert {k for k, r in custom.graphs.items() if r.stats.calls == 0} == set()
