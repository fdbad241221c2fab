"""The ASR session protocol, exercised by the ``test-vad`` engine (an energy VAD on
the real ``mm`` graph of the simulator): partials and finals, segments of a
tone-burst signal, cancellation between graph calls, the end of a session."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.asr import (
    AsrEngine,
    AsrSession,
    SessionFinished,
    TranscriptionOptions,
    channels_of,
    downmix,
    pcm_problem,
    stream_text,
)
from daemon.sdk.cancel import Cancelled, CancelToken
from daemon.sdk.local import open_engine
from daemon.sdk.tts import TtsEngine
from tests.cancel_after import CancelAfter
from tests.daemon.vad_engine import (
    FRAME_S,
    GRAPH_FRAMES,
    MAX_AUDIO_S,
    burst_signal,
    write_bundle,
)
from tests.engine_site import VAD_ENGINE, engine_site

RATE = 16000
CHUNK_S = 0.1
#: 0.5 s silence, 0.7 s burst, 0.6 s silence, 0.4 s burst, 0.3 s silence: each
#: burst ends with more than HANGOVER_S of silence, so both end before finish.
BURSTS = ((0.5, 0.0), (0.7, 0.3), (0.6, 0.0), (0.4, 0.3), (0.3, 0.0))
BURST_FINALS = ["speech 0.50-1.20", "speech 1.80-2.20"]
#: A quiet room: white noise at about -60 dBFS RMS.
NOISE_RMS = 1e-3


@pytest.fixture(scope="module")
def vad(bins, onnx_dir, tmp_path_factory):
    """The test-vad engine loaded on the simulator through the registry."""
    site = engine_site(tmp_path_factory.mktemp("engine_site"))
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(site))
    root = write_bundle(
        tmp_path_factory.mktemp("vad"),
        bins["matmul_tanh"].bin_path,
        onnx_dir / "matmul_tanh.onnx",
    )
    with open_engine(root, warmup=True) as local:
        yield local.engine
    mp.undo()


def _chunks(pcm: np.ndarray, size: int) -> list[np.ndarray]:
    return [pcm[i : i + size] for i in range(0, len(pcm), size)]


def _run(engine, pcm: np.ndarray, rate: int, size: int):  # noqa: ANN001, ANN202
    session = engine.open(TranscriptionOptions())
    seen = []
    for chunk in _chunks(pcm, size):
        seen += session.feed(chunk, rate)
    seen += session.finish()
    session.close()
    return seen


def _finals(seen) -> list[str]:  # noqa: ANN001
    return [t.text for t in seen if t.final]


def test_the_vad_is_an_asr_engine_with_sessions(vad):
    assert isinstance(vad, AsrEngine) and not isinstance(vad, TtsEngine)
    assert vad.engine_id == VAD_ENGINE and type(vad).task == "asr"
    caps = vad.capabilities()
    assert caps.task == "asr" and caps.max_input == MAX_AUDIO_S
    assert caps.languages == ("en_US",) and caps.sample_rates_in == ()
    session = vad.open(TranscriptionOptions())
    assert isinstance(session, AsrSession)
    session.close()


def test_partials_then_final_for_each_burst(vad):
    seen = _run(vad, burst_signal(BURSTS, RATE), RATE, round(CHUNK_S * RATE))
    assert _finals(seen) == BURST_FINALS
    first_final = next(i for i, t in enumerate(seen) if t.final)
    partials = seen[:first_final]
    assert len(partials) >= 3 and not any(t.final for t in partials)
    # the open stretch grows from its start until it ends for good
    assert {t.start_s for t in partials} == {0.5}
    ends = [t.end_s for t in partials]
    assert ends == sorted(ends) and ends[-1] <= 1.2
    finals = [(t.start_s, t.end_s) for t in seen if t.final]
    assert finals == [(0.5, 1.2), (1.8, 2.2)]


@pytest.mark.parametrize(
    ("rate", "size"),
    [(RATE, 10**9), (RATE, 317), (8000, 1000), (44100, 4410)],
)
def test_segments_do_not_depend_on_chunking_or_rate(vad, rate, size):
    assert _finals(_run(vad, burst_signal(BURSTS, rate), rate, size)) == BURST_FINALS


def test_noise_clicks_and_short_pauses(vad):
    rng = np.random.default_rng(0)
    noise = (NOISE_RMS * rng.standard_normal(RATE)).astype(np.float32)
    assert _run(vad, noise, RATE, 1600) == []  # a quiet room says nothing
    click = burst_signal(((0.5, 0.0), (0.04, 0.5), (0.5, 0.0)), RATE)
    assert _run(vad, click, RATE, 1600) == []  # shorter than MIN_SPEECH_S
    paused = ((0.2, 0.0), (0.3, 0.3), (0.1, 0.0), (0.3, 0.3), (0.4, 0.0))
    seen = _run(vad, burst_signal(paused, RATE), RATE, 1600)
    assert _finals(seen) == ["speech 0.20-0.90"]  # a 0.1 s pause stays inside


def test_finish_makes_an_open_stretch_final(vad):
    open_end = burst_signal(((0.2, 0.0), (0.5, 0.3)), RATE)
    seen = _run(vad, open_end, RATE, 1600)
    assert not seen[-2].final and seen[-1].final
    assert _finals(seen) == ["speech 0.20-0.70"]


def test_cancel_between_feeds_stops_at_the_next_feed(vad):
    token = CancelToken()
    session = vad.open(TranscriptionOptions(), token)
    pcm = burst_signal(BURSTS, RATE)
    list(session.feed(pcm[:RATE], RATE))
    calls = session.graph_calls
    token.cancel("client went away")
    with pytest.raises(Cancelled, match="client went away"):
        list(session.feed(pcm[RATE:], RATE))
    with pytest.raises(Cancelled):
        list(session.finish())
    assert session.graph_calls == calls  # nothing ran after the cancel
    session.close()


def test_cancel_inside_a_feed_stops_between_two_graph_calls(vad):
    # checks: the feed's entry, then one before each graph call; firing on the
    # third lets exactly one graph call run of the many this feed would make
    session = vad.open(TranscriptionOptions(), CancelAfter(3))
    long = burst_signal(((10.0, 0.3),), RATE)
    assert len(long) / RATE / FRAME_S / GRAPH_FRAMES >= 10
    with pytest.raises(Cancelled):
        list(session.feed(long, RATE))
    assert session.graph_calls == 1
    session.close()


def test_feeding_after_finish_is_a_clear_error(vad):
    session = vad.open(TranscriptionOptions())
    list(session.feed(np.zeros(1600, np.float32), RATE))
    list(session.finish())
    with pytest.raises(SessionFinished, match="session is finished"):
        list(session.feed(np.zeros(1600, np.float32), RATE))
    with pytest.raises(SessionFinished):
        list(session.finish())
    session.close()
    session.close()  # idempotent


def test_one_session_keeps_one_rate_and_channel_count(vad):
    session = vad.open(TranscriptionOptions())
    list(session.feed(np.zeros(1600, np.float32), RATE))
    with pytest.raises(ValueError, match="from 16000 Hz x 1 to 8000 Hz x 1"):
        list(session.feed(np.zeros(800, np.float32), 8000))
    with pytest.raises(ValueError, match="from 16000 Hz x 1 to 16000 Hz x 2"):
        list(session.feed(np.zeros((800, 2), np.float32), RATE))
    session.close()


@pytest.mark.parametrize("channels", [2, 8])
def test_channels_are_downmixed_to_their_mean(vad, channels):
    mono = burst_signal(BURSTS, RATE)
    # the burst on every channel but the first, which is silent: the mean is
    # the burst at (channels - 1) / channels of its level, still speech
    frames = np.repeat(mono[:, None], channels, axis=1)
    frames[:, 0] = 0.0
    seen = _run(vad, frames, RATE, 1600)
    assert _finals(seen) == BURST_FINALS


def test_feed_streams_its_transcripts_as_a_generator(vad):
    session = vad.open(TranscriptionOptions())
    pcm = burst_signal(BURSTS, RATE)
    items = session.feed(pcm, RATE)
    assert session.graph_calls == 0  # nothing runs until the host takes an item
    first = next(iter(items))
    assert first.final and first.text == BURST_FINALS[0]
    calls = session.graph_calls
    rest = list(items)
    assert session.graph_calls > calls  # the rest ran as it was taken
    assert [t.text for t in rest if t.final] == BURST_FINALS[1:]
    session.close()


def test_sessions_are_independent(vad):
    a, b = vad.open(TranscriptionOptions()), vad.open(TranscriptionOptions())
    pcm = burst_signal(BURSTS, RATE)
    seen_a, seen_b = [], []
    for chunk in _chunks(pcm, 1600):  # interleaved feeds of two streams
        seen_a += a.feed(chunk, RATE)
        seen_b += b.feed(np.zeros_like(chunk), RATE)
    assert _finals(seen_a + list(a.finish())) == BURST_FINALS
    assert list(b.finish()) == [] and seen_b == []


def test_language_hint_is_carried_by_the_transcripts(vad):
    session = vad.open(TranscriptionOptions(language="en"))
    seen = [*session.feed(burst_signal(BURSTS, RATE), RATE), *session.finish()]
    assert seen and {t.language for t in seen} == {"en"}


@pytest.mark.parametrize(
    ("pcm", "rate", "match"),
    [
        ([0.0, 0.1], RATE, "numpy array"),
        (np.zeros(4, np.int16), RATE, "float32 [n] or [n, channels]"),
        (np.zeros((2, 4, 1), np.float32), RATE, "float32 [n] or [n, channels]"),
        (np.zeros((4, 0), np.float32), RATE, "float32 [n] or [n, channels]"),
        (np.array([[0.0, np.nan]], np.float32), RATE, "NaN"),
        (np.array([0.0, np.nan], np.float32), RATE, "NaN"),
        (np.zeros(4, np.float32), 0, "positive integer"),
        (np.zeros(4, np.float32), 16000.0, "positive integer"),
        (np.zeros(4, np.float32), True, "positive integer"),
    ],
)
def test_bad_pcm_is_described(pcm, rate, match):
    problem = pcm_problem(pcm, rate)
    assert problem is not None and match in problem


def test_good_pcm_has_no_problem():
    assert pcm_problem(np.zeros(4, np.float32), RATE) is None
    assert pcm_problem(np.zeros((4, 8), np.float32), 192000) is None
    assert channels_of(np.zeros(4, np.float32)) == 1
    assert channels_of(np.zeros((4, 3), np.float32)) == 3


def test_downmix_is_the_channel_mean():
    frames = np.array([[1.0, 0.0], [0.5, -0.5]], np.float32)
    mono = downmix(frames)
    assert mono.dtype == np.float32 and mono.tolist() == [0.5, 0.0]
    same = np.zeros(3, np.float32)
    assert downmix(same) is same


@pytest.mark.parametrize("channels", range(1, 11))
def test_downmix_equals_numpys_mean_bit_for_bit(channels):
    # upstream's to_mono is np.mean(wav, axis=-1) in float32; the column sums
    # must round exactly as it does (odd lengths, and a strided view too)
    rng = np.random.default_rng(channels)
    wide = rng.standard_normal((4097, 2 * channels)).astype(np.float32)
    for frames in (wide[:, :channels].copy(), wide[:, ::2]):
        want = np.mean(frames, axis=-1).astype(np.float32)
        got = downmix(frames)
        assert got.dtype == np.float32 and np.array_equal(got, want)


def test_partials_grow_into_their_final_and_the_stream_text_joins_finals(vad):
    seen = _run(vad, burst_signal(BURSTS, RATE), RATE, round(CHUNK_S * RATE))
    shown = ""
    for t in seen:  # what a client was shown is never taken back
        assert t.text.startswith(shown)
        shown = "" if t.final else t.text
    assert stream_text(seen) == "".join(BURST_FINALS)
    assert stream_text([]) == ""
