"""PiperGraphs' two schedules: static NPU graphs (buckets, flow and decoder
windows, run lazily) and the CPU backend's any-length graphs; both exact.

The static graphs run here on onnxruntime (the ONNX the converter compiles for
the HTP), so the NPU schedule is checked without the slow simulator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("piper")
ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from daemon.engines.piper.cpu import (  # noqa: E402
    DurationPredictor,
    durations,
    expand_prior,
)
from daemon.engines.piper.engine import PiperEngine  # noqa: E402
from daemon.engines.piper.params import PiperParams, Scales  # noqa: E402
from daemon.engines.piper.pipeline import PiperGraphs  # noqa: E402
from daemon.sdk.bundles.manifest import Bundle  # noqa: E402
from daemon.sdk.graphs import CpuRunner, GraphHost  # noqa: E402
from scripts.common.floor import FLOOR_MARGIN_DB  # noqa: E402
from scripts.common.parity import snr_db  # noqa: E402
from scripts.piper.oracle import SENTENCES  # noqa: E402
from tests.piper_bundles import CPU_OPTIONS, bundle_dir, voice_path  # noqa: E402

# Windowed vs whole graphs on the same input agree to float rounding (windows.py
# module doc); measured: flow windows bitwise, decoder windows 127.7 dB, the
# encoder's padded bucket vs the real length 130.7-142.9 dB per output.
EXACT_DB = 100.0
# End to end the schedules differ by the encoder's rounding alone (m_p 132.5 dB
# apart), which the flow and decoder amplify ~36 dB: a 1-ulp change of z_p alone
# gives 112-116 dB of audio. So two float32 runs cannot agree to EXACT_DB; the
# bar follows float32's own floor instead (scripts/common/floor.py's rule: at
# most FLOOR_MARGIN_DB worse than the reference float32 is from float64). Measured on
# this sentence against torch float64 runs of the same ONNX graphs: the
# any-length graphs' float32 audio is 100.1 dB from float64, the static
# schedule's 98.2 dB; static vs any-length 96.3 dB (onnxruntime 1.30.0, 1.31.1
# and 1.32.0 alike: not a version change). A real windowing defect costs far
# more: decoder overlap 8 frames gives 65.9 dB, flow context 16 gives 46.9 dB.
ANY_LENGTH_FLOOR_DB = 100.1
# The triangle bound: the static run's error at most 10^(margin/20) times the
# any-length run's, so they are apart by at most (1 + that) times it (92.4 dB).
SAME_AUDIO_DB = ANY_LENGTH_FLOOR_DB - 20 * math.log10(1 + 10 ** (FLOOR_MARGIN_DB / 20))
DETERMINISTIC = Scales(noise_scale=0.0, length_scale=1.0, noise_w=0.0)


def _static_runners(bundle: Bundle) -> dict[str, CpuRunner]:
    from scripts.piper import graphs
    from scripts.piper.cuts import find_cuts

    model = onnx.load(voice_path())
    cuts, hop = find_cuts(model), graphs.hop_length(model)
    out = {}
    for key, spec in bundle.graphs.items():
        size = int(key.split("_")[1][1:])
        if key.startswith("enc_P"):
            graph = graphs.encoder(model, cuts, size)
        elif key.startswith("flow_F"):
            graph = graphs.flow(model, cuts, size)
        else:
            graph = graphs.decoder_window(model, cuts, size, hop)
        sess = ort.InferenceSession(
            graph.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        out[key] = CpuRunner(key, sess, spec)
    return out


@pytest.fixture(scope="module")
def both(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    """(static PiperGraphs, its runners, any-length PiperGraphs, ids of a text)."""
    bundle = Bundle.load(bundle_dir(pytestconfig, CPU_OPTIONS))
    params = PiperParams.from_dict(bundle.params)
    sdp = DurationPredictor.load(bundle.path(params.sdp))
    static = _static_runners(bundle)
    host = GraphHost("cpu")
    try:
        (runners,) = host.open([bundle])
        engine = PiperEngine()
        engine.load(bundle, runners)
        ids = engine.pieces(SENTENCES[5])[0].ids  # 371 frames
        yield PiperGraphs(params, static, sdp), static, engine.model.graphs, ids
    finally:
        host.close()


def test_which_schedule_follows_the_graphs(both) -> None:  # type: ignore[no-untyped-def]
    static, _, fit, _ = both
    assert not static.fit and fit.fit


def _calls(runners: dict[str, CpuRunner], prefix: str) -> dict[str, int]:
    return {k: r.stats.calls for k, r in runners.items() if k.startswith(prefix)}


def test_static_first_audio_after_one_flow_and_one_decoder_window(both) -> None:  # type: ignore[no-untyped-def]
    static, runners, _, ids = both
    flow = runners["flow_F256"]
    before, flows = _calls(runners, "dec_W"), flow.stats.calls
    chunks = static.stream(ids, DETERMINISTIC, np.random.default_rng(0))
    assert next(chunks).size > 0
    # the first audio waits for the build's small first window only
    made = {k: n - before[k] for k, n in _calls(runners, "dec_W").items()}
    assert ({k: n for k, n in made.items() if n}, flow.stats.calls - flows) == (
        {"dec_W64": 1},
        1,
    )
    rest = list(chunks)
    # 371 frames: F256 windows keep 224 then the rest; the decoder plan is
    # W64 (keeps 52), W128 (104), W128 (104), W128 clamped to the end (111)
    made = {k: n - before[k] for k, n in _calls(runners, "dec_W").items()}
    assert {k: n for k, n in made.items() if n} == {"dec_W64": 1, "dec_W128": 3}
    assert flow.stats.calls - flows == 2 and len(rest) == 3


def test_static_and_any_length_schedules_give_the_same_audio(both) -> None:  # type: ignore[no-untyped-def]
    static, _, fit, ids = both
    a, b = (
        np.concatenate(list(g.stream(ids, DETERMINISTIC, np.random.default_rng(0))))
        for g in (static, fit)
    )
    assert a.shape == b.shape and snr_db(a, b) >= SAME_AUDIO_DB


def test_static_windows_equal_the_whole_graphs_on_the_same_input(both) -> None:  # type: ignore[no-untyped-def]
    """Each stage alone, fed the same input both ways, so no rounding of an
    earlier stage is amplified: the bucket encoder, the F256 flow windows and
    the decoder windows equal the any-length graphs to float rounding."""
    static, _, fit, ids = both
    for got, want in zip(static.encode(ids), fit.encode(ids), strict=True):
        assert snr_db(want, got) >= EXACT_DB
    m_p, logs_p, cond = fit.encode(ids)
    mask = np.ones(m_p.shape[1], np.float32)
    no_noise = np.zeros((2, mask.size), np.float32)
    per_phoneme = durations(fit.sdp.logw(cond, mask, no_noise), mask, 1.0)
    z_p = expand_prior(m_p, logs_p, per_phoneme, None, 0.0)
    z = fit.flow(z_p)
    assert z.shape[1] == 371 and snr_db(z, static.flow(z_p)) >= EXACT_DB
    a, b = (np.concatenate(list(g.decode(z))) for g in (static, fit))
    assert a.shape == b.shape and snr_db(b, a) >= EXACT_DB


def test_only_static_buckets_cut_a_sentence_and_only_past_the_largest(
    pytestconfig: pytest.Config, both
) -> None:  # type: ignore[no-untyped-def]
    """The NPU's encoder takes at most its largest bucket (512 ids here); the
    CPU backend's takes any length. A sentence of 256..512 ids is whole on
    both; past 512 only the static engine cuts, into pieces that fit."""
    from daemon.sdk.audio.shaping import COMMA_PAUSE_S
    from daemon.sdk.tts import SynthesisOptions
    from scripts.piper.oracle import pieces_reference, piper_reference

    _, runners, fit, _ = both
    bundle = Bundle.load(bundle_dir(pytestconfig, CPU_OPTIONS))
    static = PiperEngine()
    static.load(bundle, runners)
    assert static.model.graphs.max_ids == 512 and fit.max_ids is None
    ordinary = "It was the best of times, it was the worst of times, it was the " \
        "age of wisdom, it was the age of foolishness, it was the epoch of " \
        "belief."  # fmt: skip
    (piece,) = static.pieces(ordinary)
    assert 256 < len(piece.ids) <= 512
    clause = "and then the long train rolled slowly past the quiet little station"
    text = ", ".join([clause] * 9) + "."
    pieces = static.pieces(text)
    assert len(pieces) >= 2 and all(len(p.ids) <= 512 and p.cut for p in pieces)
    assert [p.pause_s for p in pieces] == [COMMA_PAUSE_S] * (len(pieces) - 1) + [0.0]
    # one segment, one scale: piper's audio of the same pieces put together so
    deterministic = SynthesisOptions(extra={"noise_scale": 0.0, "noise_w": 0.0})
    (chunk,) = [c for c in static.synthesize(text, deterministic) if c.audio.size]
    voice, config = piper_reference(voice_path())
    want = pieces_reference(voice, config, static, text)
    assert chunk.audio.shape == want.shape and snr_db(want, chunk.audio) >= 60.0
