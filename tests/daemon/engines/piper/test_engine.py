"""The piper-vits engine vs piper-tts itself (oracle), on both graph backends."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("piper")
pytest.importorskip("onnxruntime")

from daemon.engines.piper.engine import PiperEngine  # noqa: E402
from daemon.engines.piper.params import Scales  # noqa: E402
from daemon.sdk.bundles.manifest import Bundle, BundleError  # noqa: E402
from daemon.sdk.cancel import Cancelled  # noqa: E402
from daemon.sdk.local import open_engine
from daemon.sdk.registry import Engine, engine_class  # noqa: E402
from daemon.sdk.tts import SynthesisOptions  # noqa: E402
from scripts.piper.oracle import (  # noqa: E402
    DETERMINISTIC,
    SENTENCES,
    engine_audio,
    log_mel_l1,
    piper_ids,
    piper_reference,
    piper_speaks,
    snr_db,
)
from tests.cancel_after import CancelAfter  # noqa: E402
from tests.piper_bundles import (  # noqa: E402
    CPU_OPTIONS,
    SIM_OPTIONS,
    bundle_dir,
    voice_path,
)

ORACLE_SNR_DB = 60.0  # split graphs on the CPU backend vs piper-tts, raw audio
#: What a user gets from piper-tts (normalized int16) vs from the engine: the
#: split graphs are bit-exact on the CPU backend, so only float rounding in a
#: sentence's peak may move a sample by one step (inf dB in practice).
PIPER_SNR_DB = 80.0
SIM_MEL_L1 = 0.1  # fp16 on the HTP simulator vs piper-tts
#: A sentence silence other than piper's default (0.0), to tell it apart.
SILENCE_S = 0.25
STREAMING = SynthesisOptions(extra={**DETERMINISTIC.extra, "normalize_audio": False})
# Shortest sentences: one decoder window each (~12 s apiece on the simulator).
SIM_SENTENCES = ("Hi.", "Wow!")
NOISY = SynthesisOptions(seed=7)  # the voice's own noise scales


@pytest.fixture(scope="module")
def reference():  # type: ignore[no-untyped-def]
    return piper_reference(voice_path())


@pytest.fixture(scope="module")
def cpu(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    with open_engine(bundle_dir(pytestconfig, CPU_OPTIONS), "cpu") as loaded:
        yield loaded


@pytest.fixture(scope="module")
def sim(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    with open_engine(bundle_dir(pytestconfig, SIM_OPTIONS), "qnn") as loaded:
        yield loaded


def _calls(runners) -> int:  # type: ignore[no-untyped-def]
    return sum(r.stats.calls for r in runners.values())


# --- oracle: piper-tts ------------------------------------------------------------


@pytest.mark.parametrize("text", SENTENCES)
def test_cpu_backend_reproduces_piper(cpu, reference, text: str) -> None:  # type: ignore[no-untyped-def]
    engine, _ = cpu
    voice, config = reference
    (piece,) = engine.pieces(text)
    assert [list(piece.ids)] == piper_ids(voice, text)
    ref = voice.phoneme_ids_to_audio(list(piece.ids), config)
    # Raw stitched decoder windows (before fades) vs piper's whole-graph audio...
    rng = np.random.default_rng()
    raw = engine.model.graphs.stream(list(piece.ids), Scales(0.0, 1.0, 0.0), rng)
    raw = np.concatenate(list(raw))
    assert raw.shape == ref.shape and snr_db(ref, raw) >= ORACLE_SNR_DB
    # ...and the whole engine path vs what piper-tts's synthesize gives a user.
    want = piper_speaks(voice, config, text)
    got = engine_audio(engine, text, DETERMINISTIC)
    assert got.shape == want.shape and snr_db(want, got) >= PIPER_SNR_DB


@pytest.mark.parametrize("text", SIM_SENTENCES)
def test_simulator_fp16_is_close_to_piper(sim, reference, text: str) -> None:  # type: ignore[no-untyped-def]
    engine, _ = sim
    voice, config = reference
    want = piper_speaks(voice, config, text)
    got = engine_audio(engine, text, DETERMINISTIC)
    assert got.shape == want.shape
    assert log_mel_l1(want, got, engine.sample_rate) <= SIM_MEL_L1


# --- seeds, streaming, segments -----------------------------------------------------


def _bytes(engine, text: str, options: SynthesisOptions) -> bytes:  # type: ignore[no-untyped-def]
    return engine_audio(engine, text, options).tobytes()


def test_cpu_same_seed_same_bytes_other_seed_differs(cpu) -> None:  # type: ignore[no-untyped-def]
    engine, _ = cpu
    text = SENTENCES[2]
    first = _bytes(engine, text, NOISY)
    assert _bytes(engine, text, NOISY) == first
    assert _bytes(engine, text, SynthesisOptions(seed=8)) != first
    assert _bytes(engine, text, DETERMINISTIC) != first  # the noise is really used


def test_simulator_same_seed_same_bytes(sim) -> None:  # type: ignore[no-untyped-def]
    # Seeds reach the noise the same way on both backends (CPU test above);
    # what the HTP adds is whether its fp16 execution is repeatable.
    engine, _ = sim
    first = _bytes(engine, "Hi.", NOISY)
    assert _bytes(engine, "Hi.", NOISY) == first


def test_first_audio_comes_after_one_decoder_window_when_streaming(cpu) -> None:  # type: ignore[no-untyped-def]
    """normalize_audio off, CPU backend (graphs of any length): the flow in one
    call, then a first decoder window of CPU_FIRST_WINDOW frames and one for the
    rest. The NPU's static schedule: tests/daemon/engines/piper/test_pipeline.py."""
    engine, runners = cpu
    dec, flow = runners["dec_W168"], runners["flow_F512"]  # any length: steady key
    before = dec.stats.calls, flow.stats.calls
    chunks = engine.synthesize(SENTENCES[5], STREAMING)  # 371 frames
    first = next(chunks)
    assert first.audio.size > 0
    assert (dec.stats.calls - before[0], flow.stats.calls - before[1]) == (1, 1)
    rest = list(chunks)
    assert (dec.stats.calls - before[0], flow.stats.calls - before[1]) == (2, 1)
    assert len(rest) >= 1 and rest[-1].end_of_segment


def test_a_normalized_sentence_leaves_whole_once_decoded(cpu, reference) -> None:  # type: ignore[no-untyped-def]
    # piper scales a sentence by its peak, known only once it is all decoded.
    engine, runners = cpu
    voice, config = reference
    dec = runners["dec_W168"]
    before = dec.stats.calls
    chunks = engine.synthesize(SENTENCES[5], DETERMINISTIC)
    first = next(chunks)
    assert dec.stats.calls - before == 2 and first.end_of_segment
    assert first.audio.shape == piper_speaks(voice, config, SENTENCES[5]).shape
    assert list(chunks) == []
    # without normalization: the vocoder's own level, as piper's --no-normalize
    raw = engine_audio(engine, SENTENCES[5], STREAMING)
    assert 0.2 < np.abs(raw).max() < 0.9 and np.abs(first.audio).max() == 1.0


def _with_params(engine, runners, **params):  # type: ignore[no-untyped-def]
    """Another engine on the same graphs, its voice.yaml params changed."""
    bundle = engine.bundle
    data = bundle.to_dict()
    changed = Bundle.from_dict(
        bundle.root, {**data, "params": {**data["params"], **params}}
    )
    other = PiperEngine()
    other.load(changed, runners)
    return other


def test_sentences_are_segments_with_the_voices_sentence_silence(
    cpu, reference
) -> None:  # type: ignore[no-untyped-def]
    engine, runners = cpu
    voice, config = reference
    text = "Hello world. Turn off the kitchen lights at eleven thirty."
    chunks = list(engine.synthesize(text, DETERMINISTIC))
    assert [c.segment for c in chunks if c.end_of_segment] == [0, 1]
    assert {c.sample_rate for c in chunks} == {22050}
    got = np.concatenate([c.audio for c in chunks])
    want = piper_speaks(voice, config, text)  # no silence: piper's default
    assert got.shape == want.shape and snr_db(want, got) >= PIPER_SNR_DB
    # A voice that asks for silence gets it after each sentence but the last,
    # as piper's --sentence-silence puts it.
    paused = _with_params(engine, runners, sentence_silence=SILENCE_S)
    assert paused.capabilities().sentence_pause_s == SILENCE_S
    chunks = list(paused.synthesize(text, DETERMINISTIC))
    end_0 = next(c for c in chunks if c.end_of_segment)
    gap = round(SILENCE_S * 22050)
    assert not end_0.audio[-gap:].any() and end_0.audio[:-gap].any()
    got = np.concatenate([c.audio for c in chunks])
    want = piper_speaks(voice, config, text, sentence_silence=SILENCE_S)
    assert got.shape == want.shape and snr_db(want, got) >= PIPER_SNR_DB


def test_graphs_of_any_length_speak_a_long_sentence_whole_as_piper(
    cpu, reference
) -> None:  # type: ignore[no-untyped-def]
    # Past the largest encoder bucket (512) the NPU must cut; the CPU must not.
    engine, _ = cpu
    voice, config = reference
    clause = "and then the long train rolled slowly past the quiet little station"
    text = ", ".join([clause] * 9) + "."
    (piece,) = engine.pieces(text)
    assert len(piece.ids) > 512 and not piece.cut
    got = engine_audio(engine, text, DETERMINISTIC)
    want = piper_speaks(voice, config, text)
    assert got.shape == want.shape and snr_db(want, got) >= PIPER_SNR_DB


@pytest.mark.parametrize(
    "speed, extra, length_scale",
    [
        (2.0, {}, 0.5),
        (1.0, {"length_scale": 1.5}, 1.5),
        (1.25, {"length_scale": 2}, 1.6),
    ],
)
def test_speed_and_length_scale_match_piper(  # type: ignore[no-untyped-def]
    cpu, reference, speed: float, extra: dict, length_scale: float
) -> None:
    from piper import SynthesisConfig

    engine, _ = cpu
    voice, _ = reference
    text = SENTENCES[3]
    config = SynthesisConfig(
        noise_scale=0.0, noise_w_scale=0.0, length_scale=length_scale
    )
    want = piper_speaks(voice, config, text)
    options = SynthesisOptions(speed=speed, extra={**DETERMINISTIC.extra, **extra})
    got = engine_audio(engine, text, options)
    assert got.shape == want.shape and snr_db(want, got) >= PIPER_SNR_DB


# --- cancellation, warm-up, bad input ------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 4])
def test_cancel_stops_before_the_next_graph_call(cpu, n: int) -> None:  # type: ignore[no-untyped-def]
    engine, runners = cpu
    start = _calls(runners)
    token = CancelAfter(n)
    with pytest.raises(Cancelled, match="test"):
        for _ in engine.synthesize(SENTENCES[5], DETERMINISTIC, token):
            pass
    assert _calls(runners) - start == n - 1  # no graph ran after the cancel
    # ...and the engine is reusable: the next request is complete and exact.
    again = engine_audio(engine, "Hi.", DETERMINISTIC)
    assert again.tobytes() == engine_audio(engine, "Hi.", DETERMINISTIC).tobytes()


def test_every_graph_call_is_preceded_by_a_check(cpu) -> None:  # type: ignore[no-untyped-def]
    engine, runners = cpu
    start = _calls(runners)
    token = CancelAfter(10**9)
    list(engine.synthesize(SENTENCES[8], DETERMINISTIC, token))
    # encoder, flow, two decoder windows on the CPU backend (at least)
    assert token.checks == _calls(runners) - start >= 4


def test_warmup_touches_every_graph_once(pytestconfig: pytest.Config) -> None:
    bundle = Bundle.load(bundle_dir(pytestconfig, CPU_OPTIONS))
    with open_engine(bundle, "cpu") as (engine, runners):
        assert all(r.stats.calls == 0 for r in runners.values())
        engine.warmup()
        assert {k: r.stats.calls for k, r in runners.items()} == dict.fromkeys(
            bundle.graphs, 1
        )


@pytest.mark.parametrize(
    "text, options, error, match",
    [
        ("", SynthesisOptions(), ValueError, "nothing to say"),
        ("Hi.", SynthesisOptions(extra={"top_k": 1}), ValueError, r"\['top_k'\]$"),
        ("Hi.", SynthesisOptions(extra={"noise_w": 9}), ValueError, "noise_w: exp"),
    ],
)
def test_bad_requests_fail_before_any_graph_runs(  # type: ignore[no-untyped-def]
    cpu, text: str, options: SynthesisOptions, error: type, match: str
) -> None:
    engine, runners = cpu
    start = _calls(runners)
    with pytest.raises(error, match=match):
        engine.synthesize(text, options)
    assert _calls(runners) == start


def test_voice_info_and_sample_rate(cpu) -> None:  # type: ignore[no-untyped-def]
    engine, _ = cpu
    (info,) = engine.voices()
    assert (info.name, info.languages) == ("en_US-joe-medium", ("en_US",))
    assert engine.sample_rate == 22050
    assert engine.synthesize("Hi.", SynthesisOptions(voice=info.name)) is not None


def test_load_refuses_wrong_engine_and_missing_graphs(cpu) -> None:  # type: ignore[no-untyped-def]
    engine, runners = cpu
    bundle = engine.bundle
    other = Bundle.from_dict(bundle.root, {**bundle.to_dict(), "engine": "gsv"})
    with pytest.raises(BundleError, match="engine 'gsv', not 'piper-vits'"):
        PiperEngine().load(other, runners)
    fewer = {k: r for k, r in runners.items() if k != "flow_F256"}
    with pytest.raises(BundleError, match=r"graph 'flow_F256' is missing"):
        PiperEngine().load(bundle, fewer)
    with pytest.raises(RuntimeError, match="load\\(\\) a bundle first"):
        PiperEngine().synthesize("Hi.")


def test_registered_under_hexvoice_engines(cpu) -> None:  # type: ignore[no-untyped-def]
    cls = engine_class("piper-vits")
    assert cls is PiperEngine and cls.engine_id == "piper-vits"
    engine, _ = cpu
    assert isinstance(engine, Engine)
