"""The ``qwen3-tts`` engine against upstream qwen-tts 0.1.1 on the tiny checkpoints.

The CPU parity bar, CPU backend (the bundles' fp32 ONNX): greedy
generation equals upstream's ``generate`` frame for frame, all 16 codebooks,
including the length and the EOS step, for the zh, en and mixed test texts in
CustomVoice (incl. a dialect speaker and the streaming text mode) and
x-vector-clone mode; the teacher-forced talker and predictor logits equal
upstream's raw codec_head / lm_head[k] rows (argmax 100 %, rel < 1e-4); the same
seed gives the same bytes twice, another seed other bytes. Upstream runs come
from scripts/qwen3/tts/oracle.py (CPU fp32, greedy). ``pytest -s`` prints the
measured numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest

pytest.importorskip("torch")

from daemon.engines.qwen3.tts.options import Request  # noqa: E402
from daemon.sdk.local import LocalEngine, open_engine  # noqa: E402
from daemon.sdk.tts import SynthesisOptions  # noqa: E402
from scripts.common.parity import cosine  # noqa: E402

#: frames at most per run (upstream's tiny runs may never stop; the oracle's cap)
MAX_NEW: Final = 24
#: CPU fp32 ONNX vs torch fp32 (the CPU parity bar: relative error < 1e-4)
MAX_REL: Final = 1e-4
MIN_COSINE: Final = 0.999999
#: sampled runs for the seed check: a few frames are enough to differ
SEED_FRAMES: Final = 6


@dataclass(frozen=True)
class Case:
    kind: str  # "custom" | "base"
    text: str  # a key of tiny.TEXTS
    language: str  # upstream's name or "auto"
    speaker: str | None = None  # custom_voice speaker
    text_mode: str | None = None  # None: upstream's default for the kind
    #: upstream's run ends by EOS before MAX_NEW (measured on the tiny
    #: checkpoints); False: it runs to the cap (both endings are compared)
    eos: bool = True

    @property
    def id(self) -> str:
        who = self.speaker or "xvector"
        mode = f"-{self.text_mode}" if self.text_mode else ""
        return f"{self.kind}-{self.text}-{self.language}-{who}{mode}"


CASES: Final = (
    Case("custom", "en", "english", "ryan"),
    Case("custom", "zh", "chinese", "serena"),
    Case("custom", "mixed", "auto", "aiden"),
    # chinese with a dialect speaker takes the dialect's language id
    Case("custom", "zh", "chinese", "eric"),
    Case("custom", "en", "english", "ryan", "streaming", eos=False),
    Case("base", "en", "english"),
    Case("base", "zh", "chinese"),
    Case("base", "mixed", "auto"),
)


def _clip(seconds: float = 4.0, rate: int = 16000) -> np.ndarray:
    """A voiced sweep with harmonics (at 16 kHz: the engine resamples it)."""
    rng = np.random.default_rng(3)
    t = np.arange(int(seconds * rate)) / rate
    phase = 2 * np.pi * np.cumsum(120 + 30 * np.sin(2 * np.pi * 0.7 * t)) / rate
    x = sum(np.sin(k * phase) / k for k in range(1, 10)) * 0.2
    return (x + rng.normal(0, 0.01, len(t))).astype(np.float32)


@pytest.fixture(scope="module")
def engines(
    tiny_tts_custom_bundle: Path, tiny_tts_base_bundle: Path
) -> Iterator[dict[str, LocalEngine]]:
    with (
        open_engine(tiny_tts_custom_bundle, "cpu") as custom,
        open_engine(tiny_tts_base_bundle, "cpu") as base,
    ):
        yield {"custom": custom, "base": base}


@pytest.fixture(scope="module")
def upstream(tiny_tts_custom: Path, tiny_tts_base: Path) -> dict[str, Any]:
    from scripts.qwen3.tts import oracle

    return {"custom": oracle.load(tiny_tts_custom), "base": oracle.load(tiny_tts_base)}


@pytest.fixture(scope="module")
def voice_print(engines: dict[str, LocalEngine]) -> Any:
    """The clip's x-vector as the engine clones it (engine-audio's tests hold it
    to upstream's extract_speaker_embedding; here both sides get this one)."""
    return engines["base"].engine.clone(_clip(), 16000)


def _options(case: Case, voice_print: Any, **extra: Any) -> SynthesisOptions:
    if case.text_mode:
        extra["text_mode"] = case.text_mode
    return SynthesisOptions(
        speaker=case.speaker,
        language=case.language,
        voice_print=voice_print if case.kind == "base" else None,
        extra={"max_new_tokens": MAX_NEW, **extra},
    )


@pytest.fixture(scope="module", params=CASES, ids=[c.id for c in CASES])
def run(request, engines, upstream, voice_print) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Upstream's greedy run of one case, and the engine's options for it."""
    from scripts.qwen3.tts import oracle, tiny

    case: Case = request.param
    xvector = voice_print.arrays["xvector"] if case.kind == "base" else None
    non_streaming = None if case.text_mode is None else case.text_mode != "streaming"
    want = oracle.greedy(
        upstream[case.kind], tiny.TEXTS[case.text], case.language, case.speaker,
        xvector, non_streaming, max_new_tokens=MAX_NEW,
    )  # fmt: skip
    return {"case": case, "want": want, "text": tiny.TEXTS[case.text],
            "options": _options(case, voice_print)}  # fmt: skip


def test_greedy_frames_equal_upstream_generate(run, engines) -> None:  # type: ignore[no-untyped-def]
    case, want = run["case"], run["want"]
    model = engines[case.kind].engine.model
    got = model.greedy(run["text"], run["options"])
    end = "EOS" if want.stopped else f"the {MAX_NEW}-frame cap"
    same = int((got[: len(want.codes)] == want.codes[: len(got)]).all(1).sum())
    print(f"\ngreedy {case.id}: upstream {len(want.codes)} frames (ended by {end}), "
          f"engine {len(got)}; {same} frames equal")  # fmt: skip
    assert want.stopped == case.eos  # the case covers the ending it is meant to
    assert got.shape == want.codes.shape  # the same length: the same EOS step
    np.testing.assert_array_equal(got, want.codes)
    assert len(np.unique(want.codes)) >= 3  # not a constant run


def _metrics(reference: np.ndarray, test: np.ndarray) -> dict[str, float]:
    """Over the rows of [n, V]: max-abs, rel, min cosine, argmax agreement."""
    ref, got = (
        reference.reshape(-1, reference.shape[-1]),
        test.reshape(-1, test.shape[-1]),
    )
    diff = got - ref
    cos = [cosine(reference=r, test=t) for r, t in zip(ref, got)]
    return {
        "max_abs": float(np.abs(diff).max()),
        "rel": float(np.abs(diff).max() / np.abs(ref).max()),
        "cos_min": float(min(cos)),
        "argmax": float((ref.argmax(1) == got.argmax(1)).mean()),
    }


def test_teacher_forced_logits_equal_upstreams_raw_heads(run, engines) -> None:  # type: ignore[no-untyped-def]
    case, want = run["case"], run["want"]
    model = engines[case.kind].engine.model
    request = Request.from_options(run["options"], model.p)
    prompt = model.prompt(run["text"], request)
    talker, heads = model.generator.teacher_forced(prompt, want.codes)
    for name, ref, got in (("talker", want.talker_logits, talker),
                           ("predictor", want.predictor_logits, heads)):  # fmt: skip
        assert got.shape == ref.shape, name
        m = _metrics(ref, got)
        rows = ref.size // ref.shape[-1]
        print(f"\nteacher-forced {name} {case.id} ({rows} rows): "
              + ", ".join(f"{k} {v:.3g}" for k, v in m.items()))  # fmt: skip
        assert m["argmax"] == 1.0
        assert m["rel"] < MAX_REL
        assert m["cos_min"] >= MIN_COSINE


def _bytes(engine: Any, case: Case, voice_print: Any, seed: int) -> bytes:
    from scripts.qwen3.tts import tiny

    opts = _options(case, voice_print, max_new_tokens=SEED_FRAMES)
    opts = SynthesisOptions(speaker=opts.speaker, language=opts.language,
                            voice_print=opts.voice_print, seed=seed,
                            extra=opts.extra)  # fmt: skip
    chunks = [c.audio for c in engine.synthesize(tiny.TEXTS[case.text], opts)]
    return np.concatenate(chunks).astype(np.float32).tobytes()


@pytest.mark.parametrize("kind", ["custom", "base"])
def test_the_same_seed_gives_the_same_bytes(engines, voice_print, kind) -> None:  # type: ignore[no-untyped-def]
    """Sampling on (generation_config.json's do_sample / subtalker_dosample)."""
    engine = engines[kind].engine
    assert (
        engine.model.p.sampling.do_sample
        and engine.model.p.sampling.subtalker_do_sample
    )
    case = CASES[0] if kind == "custom" else CASES[5]
    first = _bytes(engine, case, voice_print, seed=7)
    assert len(first) > 0
    assert _bytes(engine, case, voice_print, seed=7) == first
    assert _bytes(engine, case, voice_print, seed=8) != first
