"""A qwen3-tts request that is not streamed (``SynthesisOptions.streamed``
False) on the tiny CustomVoice bundle (CPU backend): each piece decoded once
its frames are all there, as upstream's decode (the wire parity test,
tests/daemon/protocols/test_wire_parity_qwen3tts.py, holds it to upstream);
its segments end where the streamed ones do; a bundle without a graph of
upstream's chunk and context says how far it is exact and logs once past it."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import numpy as np
import pytest
import yaml

from daemon.engines.qwen3.tts.codec.stream import decode, whole
from daemon.sdk.local import LocalEngine, open_engine
from daemon.sdk.tts import AudioChunk, SynthesisOptions

#: tiny.TEXTS["en"]: ryan in the streaming text mode runs to the frame cap
#: (tests/daemon/engines/qwen3/tts/test_parity_upstream.py)
TEXT = "Hello, how are you today?"
#: code0s at most: 24 frames (the last code0 never gets one, generator.py),
#: more than the tiny bundle's largest streaming window (16)
FRAMES: Final = 25
UPSTREAM_GRAPH: Final = "codec_325"


def options(streamed: bool, frames: int = FRAMES) -> SynthesisOptions:
    extra = {"greedy": True, "max_new_tokens": frames, "text_mode": "streaming"}
    return SynthesisOptions(speaker="ryan", language="english", streamed=streamed,
                            extra=extra)  # fmt: skip


@pytest.fixture(scope="module")
def custom(tiny_tts_custom_bundle: Path) -> Iterator[LocalEngine]:
    with open_engine(tiny_tts_custom_bundle, "cpu") as loaded:
        yield loaded


@pytest.fixture(scope="module")
def without_upstream_graph(
    tiny_tts_custom_bundle: Path, tmp_path_factory
) -> Iterator[LocalEngine]:
    """The same bundle with codec_325 left out of its manifest."""
    dest = tmp_path_factory.mktemp("no325") / "bundle"
    root = Path(shutil.copytree(tiny_tts_custom_bundle, dest))
    manifest = yaml.safe_load((root / "voice.yaml").read_text())
    del manifest["graphs"][UPSTREAM_GRAPH]
    (root / "voice.yaml").write_text(yaml.safe_dump(manifest))
    with open_engine(root, "cpu") as loaded:
        yield loaded


def samples(chunks: list[AudioChunk]) -> np.ndarray:
    return np.concatenate([c.audio for c in chunks])


def test_the_whole_piece_is_decoded_at_once(custom: LocalEngine) -> None:
    """The talker's frames first, then the codec: one codec_325 call for 24
    frames (upstream's one chunk), where streaming takes one per window."""
    e, m = custom.engine, custom.engine.model
    frames = m.greedy(TEXT, options(True))
    assert len(frames) == FRAMES - 1
    calls = m.codec.calls
    chunks = list(e.synthesize(TEXT, options(False)))
    assert m.codec.calls - calls == 1
    got = samples(chunks)
    want = decode(m.p, m.codec, frames, whole(m.p.codec, m.codec.sizes))
    np.testing.assert_array_equal(got, want)
    streamed = samples(list(e.synthesize(TEXT, options(True))))
    assert len(streamed) == len(got) and not np.array_equal(streamed, got)


def test_segments_end_as_streamed_ones_do(custom: LocalEngine) -> None:
    """Each piece's last chunk ends its segment (where the engine holds none
    of the request on its graphs), the same marks streamed or not."""
    e = custom.engine
    long = " ".join([TEXT] * 6)

    def marks(streamed: bool) -> list[tuple[int, bool]]:
        chunks = e.synthesize(long, options(streamed, frames=6))
        return [(c.segment, c.end_of_segment) for c in chunks]

    got = marks(False)
    ends = [s for s, end in got if end]
    assert len(ends) > 1 and ends == sorted(set(ends))  # a segment per piece
    assert [(s, end) for s, end in marks(True) if end] == [(s, True) for s in ends]


def test_a_bundle_without_upstreams_graph_says_how_far_it_is_exact(
    without_upstream_graph: LocalEngine, caplog
) -> None:
    e = without_upstream_graph.engine
    assert max(e.model.codec.sizes) == 16
    for v in e.voices():
        assert "not streamed: upstream's decode up to 1.28 s (16 frames)" in (
            v.description
        )
    caplog.set_level(logging.WARNING, "daemon.engines.qwen3.tts.engine")
    short = samples(list(e.synthesize(TEXT, options(False, frames=17))))
    assert short.size == 16 * e.model.p.codec.samples_per_frame
    assert not caplog.records  # within the largest graph: exact, nothing said
    for _ in range(2):
        list(e.synthesize(TEXT, options(False)))
    (said,) = caplog.records
    assert "a 24-frame utterance not streamed is longer than the 16 frames" in (
        said.getMessage()
    )
