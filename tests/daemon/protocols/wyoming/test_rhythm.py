"""Wyoming with the real Piper joe voice (CPU backend): rhythm, sentences, framing.

A Wyoming stream carries no seed, so the service runs a copy of the joe bundle
whose noise scales are 0: its audio is a pure function of the text.  The same
text must then give the same samples, the same total length and the same
silences whether it arrives as one ``synthesize`` or as a
``synthesize-start``/``-chunk``/``-stop`` stream cut like an LLM's tokens: the
voice's own sentence silence (piper's default, none; a second copy asks for
some in its voice.yaml) in both.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest
import yaml
from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

from daemon.protocols.wyoming.playback import SAMPLE_WIDTH, SAMPLES_PER_CHUNK
from tests.daemon.conftest import Daemon, ServiceVoice, serving
from tests.piper_bundles import CPU_OPTIONS, bundle_dir

pytest.importorskip("piper")
RATE = 22050
READ_TIMEOUT_S = 60.0
TEXT = "The sun rose over the hills. Birds began to sing! Was it a quiet morning?"
#: TEXT as an LLM streams it: cut inside words and right after the end marks.
TOKENS = ("The su", "n rose over the hil", "ls.", " Birds beg", "an to sing", "!",
          " Was it a qui", "et morning?")  # fmt: skip
#: A run of exact zeros this long is an inserted pause, not the voice's own
#: near-silence (which the zero-noise joe voice never renders as 0.1 s of 0).
MIN_GAP_S = 0.1
#: The second copy's voice.yaml ``params.sentence_silence`` (piper's: 0.0).
PAUSED: Final = "joe-paused"
SILENCE_S: Final = 0.25


def _still_joe(src: Path, dst: Path, **params: Any) -> ServiceVoice:
    """The joe bundle with noise_scale = noise_w = 0 (graphs shared by symlink)."""
    for entry in src.iterdir():
        if entry.name != "voice.yaml":
            (dst / entry.name).symlink_to(entry)
    manifest = yaml.safe_load((src / "voice.yaml").read_text())
    manifest["name"] = params.pop("name", manifest["name"])
    manifest["params"].update(noise_scale=0.0, noise_w=0.0, **params)
    (dst / "voice.yaml").write_text(yaml.safe_dump(manifest))
    return ServiceVoice(dst, manifest["name"], RATE, {})


@pytest.fixture(scope="module")
def still_joe(pytestconfig: pytest.Config, tmp_path_factory) -> ServiceVoice:
    src = bundle_dir(pytestconfig, CPU_OPTIONS)
    return _still_joe(src, tmp_path_factory.mktemp("still_joe"))


@pytest.fixture(scope="module")
def daemon(
    pytestconfig: pytest.Config,
    tmp_path_factory: pytest.TempPathFactory,
    still_joe: ServiceVoice,
):
    src = bundle_dir(pytestconfig, CPU_OPTIONS)
    paused = _still_joe(src, tmp_path_factory.mktemp("paused_joe"),
                        name=PAUSED, sentence_silence=SILENCE_S)  # fmt: skip
    voices = [{"bundle": str(still_joe.bundle)}, {"bundle": str(paused.bundle)}]
    yield from serving(
        tmp_path_factory.mktemp("rhythm"),
        still_joe,
        voices=voices,
        engine={"backend": "cpu"},
    )


async def _exchange(d: Daemon, events: list[Event], until: str) -> list[Event]:
    async with AsyncClient.from_uri(d.uri) as c:
        for e in events:
            await c.write_event(e)
        out = []
        while True:
            e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
            assert e is not None, [x.type for x in out]
            out.append(e)
            if e.type in (until, "error"):
                return out


def _cycles(events: list[Event]) -> list[list[bytes]]:
    """audio-chunk payloads of each audio-start ... audio-stop cycle."""
    cycles: list[list[bytes]] = []
    for e in events:
        if e.type == "audio-start":
            cycles.append([])
        elif e.type == "audio-chunk":
            cycles[-1].append(AudioChunk.from_event(e).audio)
    return cycles


def _pcm(cycles: list[list[bytes]]) -> np.ndarray:
    return np.frombuffer(b"".join(b"".join(c) for c in cycles), "<i2")


def said(d: Daemon, text: str, voice: str | None = None) -> list[list[bytes]]:
    v = SynthesizeVoice(name=voice) if voice else None
    events = [Synthesize(text, voice=v).event()]
    return _cycles(asyncio.run(_exchange(d, events, "audio-stop")))


def streamed(
    d: Daemon, tokens: tuple[str, ...], voice: str | None = None
) -> list[list[bytes]]:
    v = SynthesizeVoice(name=voice) if voice else None
    events = [SynthesizeStart(voice=v).event()]
    events += [SynthesizeChunk(t).event() for t in tokens]
    events += [Synthesize("".join(tokens), voice=v).event(), SynthesizeStop().event()]
    return _cycles(asyncio.run(_exchange(d, events, "synthesize-stopped")))


def gaps(pcm: np.ndarray) -> list[int]:
    """Lengths (samples) of the runs of exact zeros of at least MIN_GAP_S."""
    zero = np.concatenate([[0], (pcm == 0).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(zero))
    runs = edges[1::2] - edges[::2]
    return [int(r) for r in runs if r >= MIN_GAP_S * RATE]


@pytest.mark.parametrize("voice, silence_s", [(None, 0.0), (PAUSED, SILENCE_S)])
def test_same_text_same_rhythm_whichever_way_it_arrives(
    daemon: Daemon, voice: str | None, silence_s: float
):
    whole, stream = said(daemon, TEXT, voice), streamed(daemon, TOKENS, voice)
    assert len(whole) == 1 and len(stream) == 3  # one cycle; one per sentence
    a, b = _pcm(whole), _pcm(stream)
    print(f"\nsynthesize: {len(a) / RATE:.3f} s, gaps {[g / RATE for g in gaps(a)]}")
    print(f"streamed:   {len(b) / RATE:.3f} s, gaps {[g / RATE for g in gaps(b)]}")
    # Two sentence boundaries, each with the voice's sentence silence (none:
    # piper's default; plus the few samples its own near-silence rounds to 0),
    # in both modes.
    pause = round(silence_s * RATE)
    assert [g // pause for g in gaps(a)] == ([1, 1] if pause else [])
    assert gaps(b) == gaps(a)
    assert len(b) == len(a)
    assert np.array_equal(a, b)  # the same sentences reached the engine


def test_abbreviation_is_not_a_sentence_end_in_either_mode(daemon: Daemon):
    # "Mr." is a sentence end for espeak-ng; a pause there (or a cycle of its
    # own while streaming) is what a listener hears as "Hello Mister. ... Smith".
    stream = streamed(daemon, ("Hello Mr.", " Smith, how", " are you today?"))
    whole = said(daemon, "Hello Mr. Smith, how are you today?")
    assert len(stream) == 1
    assert gaps(_pcm(whole)) == [] and gaps(_pcm(stream)) == []
    assert np.array_equal(_pcm(stream), _pcm(whole))


def test_chunks_are_fixed_size_but_the_last_of_each_cycle(daemon: Daemon):
    # Long enough for several vocoder windows per sentence.
    text = (
        "Turn off the kitchen lights at eleven thirty and lock the back door. "
        "Then set the alarm for seven."
    )
    for cycles in (said(daemon, text), streamed(daemon, (text[:50], text[50:]))):
        for cycle in cycles:
            sizes = [len(c) for c in cycle]
            assert len(sizes) > 5
            assert set(sizes[:-1]) == {SAMPLES_PER_CHUNK * SAMPLE_WIDTH}, sizes
            assert 0 < sizes[-1] <= SAMPLES_PER_CHUNK * SAMPLE_WIDTH
