"""The ``qwen3-asr`` engine on the tiny bundle: sessions, streaming, segments,
cancellation and refusals (upstream parity: test_parity_upstream.py)."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.qwen3.asr.audio import SAMPLE_RATE
from daemon.engines.qwen3.asr.engine import Qwen3AsrEngine
from daemon.engines.qwen3.asr.text import TextStream, parse
from daemon.sdk.asr import SessionFinished, Transcript, TranscriptionOptions
from daemon.sdk.cancel import Cancelled, CancelToken
from daemon.sdk.local import LocalEngine, open_engine
from tests.daemon.engines.qwen3.asr.clips import chirp
from tests.daemon.sdk.audio.test_silence import words

#: a short decode keeps the tests quick (the random model never stops by itself)
SHORT = {"max_new_tokens": 24}


def run(engine: Qwen3AsrEngine, x: np.ndarray, rate: int = SAMPLE_RATE,
        chunk: int | None = None, **options: object) -> list[Transcript]:  # fmt: skip
    extra = options.pop("extra", SHORT)
    session = engine.open(TranscriptionOptions(extra=extra, **options))  # type: ignore[arg-type]
    out: list[Transcript] = []
    step = chunk or len(x)
    for i in range(0, len(x), step):
        out += session.feed(x[i : i + step], rate)
    out += session.finish()
    session.close()
    return out


def finals(out: list[Transcript]) -> list[Transcript]:
    return [t for t in out if t.final]


def expected(engine: Qwen3AsrEngine, x16k: np.ndarray, language: str | None = None,
             tokens: int = SHORT["max_new_tokens"]) -> str:  # fmt: skip
    """The final text of ``x16k`` as one utterance, from the model's own calls."""
    m = engine.model
    ids = m.greedy(m.inputs(x16k, language=language), tokens)
    return parse(m.tokenizer.decode(ids, skip_special_tokens=True), language).text


def test_capabilities(cpu: LocalEngine) -> None:
    caps = cpu.engine.capabilities()
    assert caps.task == "asr" and caps.streaming
    assert {"en", "zh"} <= set(caps.languages)
    assert caps.max_input == float("inf")
    (voice,) = cpu.engine.voices()
    assert voice.languages == caps.languages


def test_warmup_runs_every_graph(cpu: LocalEngine) -> None:
    before = {k: r.stats.calls for k, r in cpu.graphs.items()}
    cpu.engine.warmup()
    assert all(r.stats.calls > before[k] for k, r in cpu.graphs.items())


def test_bad_params_name_the_field(tiny_asr_bundle) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from daemon.sdk.bundles.manifest import Bundle, BundleError

    bundle = Bundle.load(tiny_asr_bundle)
    broken = replace(bundle, params={**bundle.params, "head_dim": "16"})
    with pytest.raises(BundleError, match="params: head_dim: expected an integer"):
        Qwen3AsrEngine.requirements(broken)


def test_one_utterance(cpu: LocalEngine) -> None:
    engine, x = cpu.engine, chirp(3.1)
    out = run(engine, x)
    (final,) = finals(out)
    assert out[-1] is final
    assert final.text == expected(engine, x)
    assert (final.start_s, final.end_s) == (0.0, len(x) / SAMPLE_RATE)
    partials = [t.text for t in out if not t.final]
    assert all(b.startswith(a) and b != a for a, b in zip(partials, partials[1:]))


def test_streams_like_one_shot(cpu: LocalEngine) -> None:
    """44.1 kHz stereo in uneven chunks, loud at the end (the peak passes 1 and
    the mel max moves after windows were encoded): the same transcript as the
    16 kHz mono version in one piece."""
    import soxr

    rate = 44100
    t = np.arange(round(4.5 * rate)) / rate
    mono = 0.2 * np.sin(2 * np.pi * (300 + 200 * t) * t)
    mono[-rate:] *= 8  # peak 1.6
    stereo = np.stack([mono, 0.5 * mono], axis=1).astype(np.float32)
    x16 = soxr.resample(stereo.mean(axis=1).astype(np.float32), rate, SAMPLE_RATE,
                        quality="soxr_hq")  # fmt: skip
    x16 = np.pad(x16, (0, int(np.ceil(len(stereo) * SAMPLE_RATE / rate)) - len(x16)))
    got = finals(run(cpu.engine, stereo, rate, chunk=3001))
    assert [t.text for t in got] == [expected(cpu.engine, x16)]


def test_encoded_early_windows_are_redone_when_the_floor_moves(
    cpu: LocalEngine,
) -> None:
    m = cpu.engine.model
    x = chirp(7.5, level=0.05)
    x[-8000:] *= 30  # a late peak > 1 moves both the scale and the floor
    audio = m.audio()
    for i in range(0, len(x), 1600):
        audio.push(x[i : i + 1600])
        for _ in audio.encode_ready():
            pass
    early = audio.encoder_calls
    assert early >= 1
    for _ in audio.finish():
        pass
    windows = -(-audio.frames // m.p.mel.window_frames)
    assert audio.encoder_calls == windows + early  # every early window redone
    np.testing.assert_array_equal(audio.rows, m.inputs(x).audio)


def test_unchanged_floor_keeps_early_windows(cpu: LocalEngine) -> None:
    m = cpu.engine.model
    x = chirp(7.5)
    x[:1600] *= 3  # the loudest part comes first
    audio = m.audio()
    audio.push(x)
    for _ in audio.encode_ready():
        pass
    for _ in audio.finish():
        pass
    windows = -(-audio.frames // m.p.mel.window_frames)
    assert audio.encoder_calls == windows
    np.testing.assert_array_equal(audio.rows, m.inputs(x).audio)


def test_long_audio_is_cut_at_pauses(cpu: LocalEngine) -> None:
    rng = np.random.default_rng(7)
    plan = [(rng.uniform(0.3, 0.6), rng.uniform(0.2, 0.4)) for _ in range(12)]
    x, pauses = words(plan, seed=3)
    out = finals(run(cpu.engine, x, chunk=4000, extra={**SHORT, "max_segment_s": 2.0}))
    assert len(out) >= 3
    assert out[0].start_s == 0.0 and out[-1].end_s == len(x) / SAMPLE_RATE
    for a, b in zip(out, out[1:]):
        assert a.end_s == b.start_s and a.end_s - a.start_s <= 2.0
        cut = round(a.end_s * SAMPLE_RATE)
        assert any(p <= cut < q for p, q in pauses)
    for seg in out[:-1]:  # each segment is its own utterance
        piece = x[round(seg.start_s * SAMPLE_RATE) : round(seg.end_s * SAMPLE_RATE)]
        assert seg.text == expected(cpu.engine, piece)


def test_forced_language(cpu: LocalEngine) -> None:
    m, x = cpu.engine.model, chirp(1.7)
    assert m.inputs(x, language="English").prompt.text.endswith(
        "language English<asr_text>"
    )
    out = run(cpu.engine, x, language="en_US")
    assert {t.language for t in out} == {"English"}  # upstream's name, as it says
    assert finals(out)[0].text == expected(cpu.engine, x, "English")


def test_short_utterances(cpu: LocalEngine) -> None:
    """Under one chunk (the stem masks), under one frame (nothing to hear)."""
    x = chirp(0.45)
    assert finals(run(cpu.engine, x))[0].text == expected(cpu.engine, x)
    (nothing,) = run(cpu.engine, x[:100])
    assert nothing.final and nothing.text == ""


def test_teacher_forcing_replays_greedy(cpu: LocalEngine) -> None:
    m = cpu.engine.model
    inputs = m.inputs(chirp(2.2))
    ids = m.greedy(inputs, 16)
    logits = m.teacher_forced(inputs, ids)
    assert logits.shape == (17, m.p.vocab)
    assert logits[:-1].argmax(axis=1).tolist() == ids


def test_sampling_is_seeded(cpu: LocalEngine) -> None:
    x = chirp(1.5)
    extra = {**SHORT, "temperature": 0.9, "top_k": 20, "top_p": 0.9, "seed": 5}
    a, b = run(cpu.engine, x, extra=extra), run(cpu.engine, x, extra=extra)
    assert [t.text for t in a] == [t.text for t in b]


def test_cancel_between_graph_calls(cpu: LocalEngine) -> None:
    cancel = CancelToken()
    # a forced language: every decoded piece is transcript text, so partials
    options = TranscriptionOptions(language="en", extra=SHORT)
    session = cpu.engine.open(options, cancel)
    list(session.feed(chirp(1.5), SAMPLE_RATE))
    items = iter(session.finish())
    assert not next(items).final  # the first partial: decoding has begun
    calls = sum(r.stats.calls for r in cpu.graphs.values())
    cancel.cancel("client left")
    with pytest.raises(Cancelled, match="client left"):
        next(items)
    assert sum(r.stats.calls for r in cpu.graphs.values()) == calls
    session.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"language": "xx"}, "unsupported language 'xx'; supported: zh \\(Chinese\\)"),
        ({"extra": {"beam": 2}}, "unknown field"),
        ({"extra": {"max_new_tokens": 10_000}}, "max_new_tokens: expected an integer"),
        ({"extra": {"temperature": -1.0}}, "temperature"),
        ({"extra": {"max_segment_s": 600.0}}, "max_segment_s: expected at most"),
        ({"prompt": "word " * 200}, "shorten it"),
    ],
)
def test_bad_options(cpu: LocalEngine, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cpu.engine.open(TranscriptionOptions(**options))


def test_stream_rules(cpu: LocalEngine) -> None:
    session = cpu.engine.open(TranscriptionOptions(extra=SHORT))
    list(session.feed(chirp(0.2), SAMPLE_RATE))
    with pytest.raises(ValueError, match="changed from 16000 Hz"):
        session.feed(chirp(0.2), 8000)
    with pytest.raises(ValueError, match="1 channel"):
        session.feed(np.zeros((10, 2), np.float32), SAMPLE_RATE)
    list(session.finish())
    with pytest.raises(SessionFinished):
        session.feed(chirp(0.2), SAMPLE_RATE)
    session.close()


def test_streamed_text_is_the_decode(cpu: LocalEngine) -> None:
    m = cpu.engine.model
    ids = m.greedy(m.inputs(chirp(2.0, seed=4)), 40)
    stream = TextStream(m.tokenizer)
    joined = "".join(stream.push(i) for i in ids) + stream.flush()
    assert joined == m.tokenizer.decode(ids, skip_special_tokens=True)


@pytest.mark.simulator
def test_simulator_session(tiny_asr_bundle) -> None:  # type: ignore[no-untyped-def]
    """The compiled graphs (fp16) give the CPU's greedy tokens on a short clip."""
    x = chirp(1.3)
    with open_engine(tiny_asr_bundle, "cpu") as cpu_engine:
        want = cpu_engine.engine.model
        want_ids = want.greedy(want.inputs(x), 6)
    with open_engine(tiny_asr_bundle, "qnn") as sim:
        m = sim.engine.model
        assert m.greedy(m.inputs(x), 6) == want_ids
        out = run(sim.engine, x, extra={"max_new_tokens": 6})
    assert (
        finals(out)[0].text
        == parse(m.tokenizer.decode(want_ids, skip_special_tokens=True)).text
    )
