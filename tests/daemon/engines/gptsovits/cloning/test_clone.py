"""Zero-shot cloning in the engine, on the CPU backend: the tiny test voice
built with the four reference graphs (``gsv_clone_voice``) makes a print from
a clip it spoke itself, and speaks with it reproducibly; a bundle without the
graphs does not clone; unusable clips and transcripts are refused clearly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from daemon.engines.gptsovits.cloning.voiceprint import (
    reference_model_id,
    reference_of,
)
from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.engines.gptsovits.reference.params import HUBERT_RATE, PROMPT_ZEROS
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cloning import VoicePrint
from daemon.sdk.local import open_engine
from daemon.sdk.tts import SynthesisOptions

RATE = 32000
SPOKEN, TRANSCRIPT, CLIP_SECONDS = "你好。你好。", "你好。", 3.2
TEXT = "我们走吧。"
#: HuBERT's conv front end (400-sample receptive field, hop 320) and ssl_proj (kernel 2,
#: stride 2): tokens of an n-sample 16 kHz input (docs/gpt-sovits.md, reference audio)
HUBERT_FIELD, HUBERT_HOP = 400, 320


@pytest.fixture(scope="module")
def engine(gsv_clone_voice: Path) -> Iterator[GptSovitsEngine]:
    bundle = Bundle.load(gsv_clone_voice / "bundle")
    with open_engine(bundle, "cpu", warmup=False) as (e, _):
        assert isinstance(e, GptSovitsEngine)
        yield e


def say(e: GptSovitsEngine, text: str, seed: int, vp: VoicePrint | None = None):
    opts = SynthesisOptions(seed=seed, voice_print=vp)
    return np.concatenate([c.audio for c in e.synthesize(text, opts)])


@pytest.fixture(scope="module")
def clips(engine: GptSovitsEngine) -> dict[str, np.ndarray]:
    """What the test voice said (two seeds), cut to CLIP_SECONDS."""
    n = round(CLIP_SECONDS * RATE)
    out = {name: say(engine, SPOKEN, seed) for name, seed in (("main", 3), ("aux", 4))}
    assert all(len(a) >= n for a in out.values())
    return {name: a[:n].astype(np.float32) for name, a in out.items()}


def test_cloning_is_declared_only_with_the_reference_graphs(cpu_engine, engine):
    assert cpu_engine.capabilities().cloning is None
    with pytest.raises(ValueError, match="no reference graphs"):
        cpu_engine.clone(np.zeros(RATE * 4, np.float32), RATE, TRANSCRIPT)
    c = engine.capabilities().cloning
    assert c is not None
    # the tiny bundle's windows end at 4 s (upstream's 10 s at full size)
    assert (c.min_seconds, c.max_seconds, c.transcript) == (3.0, 4.0, "required")
    assert c.max_aux >= 1
    assert c.model == reference_model_id(engine.loaded.bundle.graphs)


def test_a_clip_becomes_a_print_that_speaks(engine, clips):
    vp = engine.clone(clips["main"], RATE, TRANSCRIPT, language="zh")
    p = engine.loaded.params
    a = vp.arrays
    phones = engine.loaded.text.phonemize(TRANSCRIPT).phone_ids
    np.testing.assert_array_equal(a["phones"], phones)
    assert a["phones"].dtype == np.int32 and a["prompt"].dtype == np.int32
    assert a["bert"].shape == (len(phones), p.bert_dim)
    samples = round(CLIP_SECONDS * HUBERT_RATE) + PROMPT_ZEROS
    frames = (samples - HUBERT_FIELD) // HUBERT_HOP + 1
    assert len(a["prompt"]) == frames // 2  # upstream's count for this length
    assert a["ge"].shape == (1, p.gin, 1) and np.isfinite(a["ge"]).all()
    assert dict(vp.meta) | {"seconds": 0} == {
        "text": TRANSCRIPT, "lang": "zh", "prompt_semantic": "hubert",
        "seconds": 0, "aux": 0,
    }  # fmt: skip
    ref = reference_of(vp, p, engine.capabilities().cloning.model)
    np.testing.assert_array_equal(ref.prompt, a["prompt"])

    spoken = say(engine, TEXT, 7, vp)
    assert len(spoken) > 0 and np.abs(spoken).max() > 1e-3
    np.testing.assert_array_equal(say(engine, TEXT, 7, vp), spoken)
    assert not np.array_equal(say(engine, TEXT, 7), spoken)
    # The same clip, the same print (registration is deterministic).
    again = engine.clone(clips["main"], RATE, "你好")  # "。" appended as upstream
    assert again.meta["text"] == TRANSCRIPT
    for key in a:
        np.testing.assert_array_equal(again.arrays[key], a[key])


def test_aux_clips_average_ge_after_prelu(engine, clips):
    main = engine.clone(clips["main"], RATE, TRANSCRIPT)
    other = engine.clone(clips["aux"], RATE, TRANSCRIPT)
    both = engine.clone(clips["main"], RATE, TRANSCRIPT, aux=[(clips["aux"], RATE)])
    assert both.meta["aux"] == 1
    np.testing.assert_array_equal(both.arrays["prompt"], main.arrays["prompt"])
    for key in ("ge", "ge512"):
        mean = (main.arrays[key] + other.arrays[key]) / 2
        np.testing.assert_allclose(both.arrays[key], mean, rtol=1e-5, atol=1e-6)


def test_unusable_clips_and_transcripts_are_refused(engine, clips):
    clip = clips["main"]
    cases = [
        ((clip[: 2 * RATE], RATE, TRANSCRIPT), {}, "a reference must be 3-4 s"),
        ((clip, RATE, TRANSCRIPT), {"language": "en"}, "has no en text"),
        ((clip, RATE, TRANSCRIPT), {"language": "fr"}, "expected zh or en"),
        ((clip, RATE, " "), {}, "transcript is required"),
        ((clip, RATE, "the quick brown fox jumps over the lazy dog. " * 3), {},
         "leave no room for text"),
        ((clip, RATE, TRANSCRIPT), {"aux": [(clip[:100], RATE)]}, "aux clip 0"),
    ]  # fmt: skip
    for args, kw, words in cases:
        with pytest.raises(ValueError, match=words):
            engine.clone(*args, **kw)


def test_a_print_of_other_graphs_does_not_speak(engine, clips):
    vp = engine.clone(clips["main"], RATE, TRANSCRIPT)
    other = VoicePrint(vp.engine_id, "0" * 64, vp.arrays, vp.meta)
    with pytest.raises(ValueError, match="made with reference graphs 000000000000"):
        say(engine, TEXT, 7, other)
