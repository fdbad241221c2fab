"""The talker on the tiny CustomVoice bundle (CPU backend): teacher-forced
logits equal upstream's codec_head (and, fed the same frames, the predictor's
lm_head[k]), KV buckets grow mid-utterance with the same
logits, prompts that do not fit are refused clearly."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from daemon.engines.qwen3.tts.frames.generator import Generator
from daemon.engines.qwen3.tts.frames.predictor import Predictor
from daemon.engines.qwen3.tts.frames.talker import GraphTime, Talker
from daemon.sdk.ar.kv import CapacityError
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.local import LocalEngine, open_engine
from daemon.sdk.tts import SynthesisOptions

TEXT = "Hello world, this is a test."
OPTIONS = SynthesisOptions(voice="ryan", language="english")
#: forced frames (random codes of the tiny codebook), past the small bucket
CODES = np.random.default_rng(0).integers(0, 128, (60, 16))


@pytest.fixture(scope="module")
def custom(tiny_tts_custom_bundle: Path) -> Iterator[LocalEngine]:
    with open_engine(tiny_tts_custom_bundle, "cpu") as loaded:
        yield loaded


@pytest.fixture(scope="module")
def upstream(tiny_tts_custom: Path) -> Any:
    from scripts.qwen3.tts import oracle

    return oracle.load(tiny_tts_custom)


def test_teacher_forced_logits_are_upstreams(
    custom: LocalEngine, upstream: Any
) -> None:
    from scripts.qwen3.tts import oracle

    m = custom.engine.model
    want = oracle.greedy(
        upstream, TEXT, "english", "ryan", None, True, max_new_tokens=12
    )
    forced = oracle.teacher_forced(
        upstream, TEXT, want.codes, "english", "ryan", None, True
    )
    prompt = m.prompt(TEXT, m.request(OPTIONS))
    talker, heads = m.generator.teacher_forced(prompt, want.codes)
    for ours, ref in ((talker, forced.talker_logits), (heads, forced.predictor_logits)):
        assert ours.shape == ref.shape
        assert np.abs(ours - ref).max() / np.abs(ref).max() < 1e-4
        np.testing.assert_array_equal(ours.argmax(-1), ref.argmax(-1))
    assert heads.shape == (len(want.codes), 15, m.p.predictor.vocab)
    assert talker.shape == (len(want.codes) + 1, m.p.talker.vocab)


def test_kv_buckets_grow_mid_utterance(
    custom: LocalEngine, upstream: Any, tiny_tts_custom_bundle: Path, tmp_path: Path
) -> None:
    """A smaller decode bucket (exported from upstream's weights) holds the
    prompt; the utterance moves to the bundle's once it is full, contents kept."""
    torch = pytest.importorskip("torch")
    import onnxruntime as ort

    from daemon.sdk.graphs import CpuRunner
    from scripts.qwen3.tts.graphs.export import export_talker_decode

    m = custom.engine.model
    small = 40
    path = tmp_path / f"talker_decode_{small}.onnx"
    with torch.no_grad():
        export_talker_decode(upstream.model, small, path)
    big = m.p.kv_buckets[-1]
    bundle = Bundle.load(tiny_tts_custom_bundle)
    spec = bundle.graphs[f"talker_decode_{big}"]  # the same tensor names
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with open_engine(bundle, "cpu") as own:  # runners bound to nobody else's buffers
        graphs = dict(own.graphs)
        graphs[f"talker_decode_{small}"] = CpuRunner(
            f"talker_decode_{small}", session, spec
        )
        logits, heads, length = _grown(m, graphs, small, big)
    assert length == big
    prompt = m.prompt(TEXT, m.request(OPTIONS))
    ref_logits, ref_heads = m.generator.teacher_forced(prompt, CODES)
    np.testing.assert_allclose(logits, ref_logits, rtol=0, atol=1e-4)
    np.testing.assert_array_equal(logits.argmax(-1), ref_logits.argmax(-1))
    np.testing.assert_allclose(heads, ref_heads, rtol=0, atol=1e-4)


def _grown(
    m: Any, graphs: dict[str, Any], small: int, big: int
) -> tuple[Any, Any, int]:
    """Teacher-forced logits of a generator over buckets (small, big), and the
    bucket it ended in."""
    p = dataclasses.replace(m.p, kv_buckets=(small, big))
    time = GraphTime()
    talker = Talker(p, graphs, time)
    cp = m.predictor
    predictor = Predictor(
        p, graphs["cp_step"], cp.codec_embedding, cp.cp_embedding, time
    )
    grown = Generator(p, talker, predictor)
    prompt = m.prompt(TEXT, m.request(OPTIONS))
    assert prompt.length < small < prompt.length + len(CODES)
    logits, heads = grown.teacher_forced(prompt, CODES)
    assert talker.bucket is not None
    return logits, heads, talker.bucket.length


def test_a_prompt_longer_than_the_prefill_bucket_is_refused(
    custom: LocalEngine,
) -> None:
    m = custom.engine.model
    rows = np.zeros((m.talker.max_prompt + 1, m.p.talker.hidden), np.float32)
    with pytest.raises(
        CapacityError,
        match="65-row talker prompt exceeds the largest prefill bucket 64",
    ):
        m.talker.start(rows)


def test_teacher_forcing_past_the_kv_bucket_is_refused(custom: LocalEngine) -> None:
    m = custom.engine.model
    prompt = m.prompt(TEXT, m.request(OPTIONS))
    codes = np.zeros((m.talker.max_positions, 16), np.int64)
    with pytest.raises(ValueError, match="exceed the largest KV bucket 192"):
        m.generator.teacher_forced(prompt, codes)
    with pytest.raises(
        ValueError, match=r"codes must be \[frames, 16\], found \[3, 15\]"
    ):
        m.generator.teacher_forced(prompt, np.zeros((3, 15), np.int64))


def test_new_frames_are_clamped_to_the_kv_bucket(custom: LocalEngine) -> None:
    m = custom.engine.model
    request = m.request(dataclasses.replace(OPTIONS, extra={"greedy": True}))
    prompt = m.prompt(TEXT, request)
    assert (
        m.generator.limit(prompt, request) == m.talker.max_positions - prompt.length + 1
    )
    short = m.request(dataclasses.replace(OPTIONS, extra={"max_new_tokens": 5}))
    assert m.generator.limit(prompt, short) == 5
    assert (
        len(list(m.generator.frames(prompt, short))) <= 4
    )  # the 5th code0 has no frame
