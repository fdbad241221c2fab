"""Where GPT-SoVITS may be interleaved with itself: at a segment's end, not
inside one.  The service runs other requests between the chunk that ends a
segment and the next (daemon/sdk/tts.py); two requests of the same engine
with different references (the bundle's voice and a voice cloned from its own
speech) must then sound exactly as alone.  Inside a segment the vocoder's bound
``ge`` is the request's, so switching there would change the audio: the test
checks that too, or it could not tell a boundary from any chunk.

The test voice with the reference graphs (``gsv_clone_voice``), real graphs on
the CPU backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.local import open_engine
from daemon.sdk.tts import AudioChunk, SynthesisOptions

#: Four sentences: four segments, several vocoder windows each.
TEXT = "你好。我们走吧。你好。我们走吧。"
#: What the clip says, and its transcript; the clip is cut to CLIP_S (the tiny
#: bundle takes 3..4 s of reference).
SPOKEN, TRANSCRIPT, CLIP_S = "你好。你好。", "你好。", 3.2


@pytest.fixture(scope="module")
def engine(gsv_clone_voice: Path) -> Iterator[GptSovitsEngine]:
    bundle = Bundle.load(gsv_clone_voice / "bundle")
    with open_engine(bundle, "cpu", warmup=False) as (engine, _):
        assert isinstance(engine, GptSovitsEngine)
        yield engine


@pytest.fixture(scope="module")
def requests(engine: GptSovitsEngine) -> tuple[SynthesisOptions, SynthesisOptions]:
    """The bundle's voice, and a voice cloned from its speech: two references."""
    said = engine.synthesize(SPOKEN, SynthesisOptions(seed=3))
    clip = np.concatenate([c.audio for c in said])[: round(CLIP_S * engine.sample_rate)]
    vp = engine.clone(clip, engine.sample_rate, TRANSCRIPT)
    own = SynthesisOptions(seed=1)
    cloned = SynthesisOptions(seed=2, voice=engine.default_voice, voice_print=vp)
    return own, cloned


def _interleaved(
    engine: GptSovitsEngine,
    requests: tuple[SynthesisOptions, ...],
    switch: Callable[[AudioChunk], bool],
) -> list[np.ndarray]:
    """Each request's audio, the generators taking turns after each chunk
    ``switch`` picks (as the service's worker does after a segment's end)."""
    gens = [engine.synthesize(TEXT, o) for o in requests]
    out: list[list[np.ndarray]] = [[] for _ in gens]
    live = list(range(len(gens)))
    while live:
        for i in list(live):
            for chunk in gens[i]:
                out[i].append(chunk.audio)
                if switch(chunk):
                    break
            else:
                live.remove(i)
    return [np.concatenate(a) for a in out]


def test_a_segments_end_is_a_boundary_and_its_inside_is_not(engine, requests):
    alone = [_interleaved(engine, (o,), lambda c: False)[0] for o in requests]
    assert not np.array_equal(*alone)  # two voices, or the test tells nothing
    at_ends = _interleaved(engine, requests, lambda c: c.end_of_segment)
    assert all(np.array_equal(a, b) for a, b in zip(at_ends, alone))
    anywhere = _interleaved(engine, requests, lambda c: True)
    assert not all(np.array_equal(a, b) for a, b in zip(anywhere, alone))
