"""Window schedule for static vocoder graphs, and stitching vs a full decode."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.piper.cpu import durations, expand_prior
from daemon.sdk.audio.windows import (
    OVERLAP_FRAMES,
    Window,
    cost,
    decode_windowed,
    plan,
    windows,
)
from scripts.common.parity import snr_db


def _tiles(wins: list[Window], n: int, overlap: int, fit: bool) -> None:
    kept = []
    for w in wins:
        assert 0 <= w.start < w.stop <= n
        assert 0 <= w.keep_from < w.keep_to <= w.stop - w.start
        if fit:
            assert w.size == w.stop - w.start  # cut to the sequence, never padded
        elif n >= w.size:
            assert w.stop - w.start == w.size  # clamped, never padded
        # every kept frame has `overlap` real frames each side, except at the
        # sequence edges
        assert w.keep_from >= overlap or w.start == 0
        assert (w.stop - w.start) - w.keep_to >= overlap or w.stop == n
        kept.extend(range(w.start + w.keep_from, w.start + w.keep_to))
    assert kept == list(range(n))


@pytest.mark.parametrize("n", [1, 5, 95, 96, 97, 150, 168, 169, 240, 577, 1000])
def test_windows_tile_the_sequence_with_context(n: int) -> None:
    _tiles(list(windows(n)), n, OVERLAP_FRAMES, fit=False)


@pytest.mark.parametrize("n", [1, 20, 31, 32, 33, 100, 300, 1000])
@pytest.mark.parametrize("fit", [False, True])
def test_small_first_window_then_large_ones(n: int, fit: bool) -> None:
    wins = list(windows(n, 256, 12, first=32, fit=fit))
    _tiles(wins, n, 12, fit)
    assert wins[0].size == min(32, n) if fit else wins[0].size == 32
    assert all(w.size == 256 for w in wins[1:]) or fit
    if n > 32:
        # the first audio needs 32 frames decoded; the rest goes in few windows
        assert wins[0].keep_to == 20 and len(wins) <= 2 + n // 232


def test_short_sequence_is_one_partial_window() -> None:
    assert list(windows(40)) == [Window(0, 40, 0, 40, 96)]
    assert list(windows(40, fit=True)) == [Window(0, 40, 0, 40, 40)]


def test_edge_window_is_clamped_not_padded() -> None:
    first, last = windows(100)
    assert first == Window(0, 96, 0, 84, 96)  # no left context needed at the start
    assert last == Window(4, 100, 80, 96, 96)


def test_custom_sizes() -> None:
    wins = list(windows(300, window=128, overlap=32))
    assert all(w.stop - w.start == 128 for w in wins)
    assert wins[0].keep_to == 96 and wins[-1].stop == 300


def test_cost_is_frames_computed_per_frame_kept() -> None:
    assert cost(list(windows(40))) == 96 / 40  # padded
    assert cost(list(windows(40, fit=True))) == 1.0
    # steady state: window / (window - 2 overlap)
    assert cost(list(windows(72 * 100 + 24))) == pytest.approx(96 / 72, rel=0.01)
    assert cost(list(windows(300, 4096, 12, first=128, fit=True))) == 324 / 300


# A build's decoder sizes: first 64, steady 168, tails 96/128
# (scripts/piper/convert.py defaults).
SIZES = (64, 96, 128, 168)


@pytest.mark.parametrize("n", [1, 20, 33, 60, 100, 140, 169, 209, 250, 577, 1000])
def test_several_sizes_tile_the_sequence_with_context(n: int) -> None:
    wins = list(windows(n, 168, 12, first=64, sizes=SIZES))
    _tiles(wins, n, 12, fit=False)
    assert wins[0].size == 64
    assert [w.size for w in wins] == list(plan(n, SIZES, 12, first=64))


@pytest.mark.parametrize(
    "n, sizes",
    [(100, [64, 64]), (140, [64, 128]), (170, [64, 96, 64]), (200, [64, 168])],
)
def test_the_tail_gets_the_smallest_size_that_covers_it(n: int, sizes: list) -> None:
    assert [w.size for w in windows(n, 168, 12, first=64, sizes=SIZES)] == sizes


@pytest.mark.parametrize("n", range(1, 1200, 7))
def test_planned_sizes_never_compute_more_than_one_steady_size(n: int) -> None:
    planned = list(windows(n, 168, 12, first=64, sizes=SIZES))
    single = list(windows(n, 168, 12, first=64))
    assert cost(planned) <= cost(single)


def test_a_tail_size_too_small_for_its_overlap_is_rejected() -> None:
    with pytest.raises(ValueError, match="window 20 with overlap 12"):
        list(windows(100, 96, 12, first=32, sizes=(20,)))


@pytest.mark.parametrize(
    "n, window, overlap", [(0, 96, 12), (-3, 96, 12), (10, 24, 12), (10, 0, 0)]
)
def test_bad_schedule_is_rejected(n: int, window: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        list(windows(n, window, overlap))


def test_first_window_too_small_for_its_overlap_is_rejected() -> None:
    with pytest.raises(ValueError, match="window 24 with overlap 12"):
        list(windows(100, 96, 12, first=24))


def test_decoder_returning_wrong_length_is_an_error() -> None:
    frames = np.zeros((4, 10), np.float32)
    with pytest.raises(ValueError, match="expected 960"):
        list(decode_windowed(frames, lambda z, m: np.zeros(5), hop=10))


def test_frames_must_be_two_dimensional() -> None:
    with pytest.raises(ValueError, match="channels, n"):
        list(decode_windowed(np.zeros(10, np.float32), lambda z, m: z, hop=1))


def test_decoder_sees_zero_padding_and_mask_for_short_input() -> None:
    seen = []

    def decode(z: np.ndarray, mask: np.ndarray) -> np.ndarray:
        seen.append((z.copy(), mask.copy()))
        return np.repeat(z[0], 2)

    frames = np.arange(1, 11, dtype=np.float32)[None, :]
    (chunk,) = list(decode_windowed(frames, decode, hop=2))
    z, mask = seen[0]
    assert mask.sum() == 10 and mask[:10].all()
    assert not z[:, 10:].any()
    np.testing.assert_array_equal(chunk, np.repeat(frames[0], 2))


# --- stitching with the real Piper HiFiGAN (onnxruntime, fp32) -----------------

# Phoneme ids of "Hello world." (piper-tts, en_US-joe-medium) and a filler phrase.
HELLO_IDS = [1, 0, 20, 0, 59, 0, 24, 0, 120, 0, 27, 0, 100, 0, 3, 0, 35, 0, 120, 0]
HELLO_IDS += [62, 0, 122, 0, 24, 0, 17, 0, 10, 0, 2]
FILLER_IDS = [3, 0, 41, 0, 74, 0, 31, 0] * 12


class _PiperParts:
    """The bundle's graphs on the CPU backend, plus the static decoder window the
    NPU compiles (scripts.piper.graphs.decoder_window, on onnxruntime) as a
    DecodeFn, and the CPU backend's any-length decoder."""

    def __init__(self, pipeline, runners, static) -> None:  # type: ignore[no-untyped-def]
        self.pipeline, self.runner, self.static = pipeline, runners["dec_W96"], static
        self.encode, self.flow, self.sdp = pipeline.encode, pipeline.flow, pipeline.sdp
        self.hop = pipeline.params.hop

    def decode_window(self, z: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feed = {"z": z[None], "frame_mask": mask.reshape(1, 1, -1)}
        return self.static[z.shape[1]].run(None, feed)[0]

    def decode_any(self, z: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feed = {"z": z[None], "frame_mask": mask.reshape(1, 1, -1)}
        return self.runner.run(feed)[0]


STATIC_SIZES = (32, *SIZES)  # the build's (96: the schedule before them)


@pytest.fixture(scope="session")
def piper_decoders(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    """The bundle's windowed decoders and the voice's whole-sequence decoder."""
    import onnx
    import onnxruntime as ort

    from scripts.piper import graphs
    from scripts.piper.cuts import find_cuts
    from tests.piper_bundles import cpu_parts, voice_path

    model = onnx.load(voice_path())
    cuts, hop = find_cuts(model), graphs.hop_length(model)
    static = {
        w: ort.InferenceSession(
            graphs.decoder_window(model, cuts, w, hop).SerializeToString(),
            providers=["CPUExecutionProvider"],
        )
        for w in STATIC_SIZES
    }
    with cpu_parts(pytestconfig, "decoder_dynamic") as (pipeline, runners, session):
        yield _PiperParts(pipeline, runners, static), session


def _latent(piper: _PiperParts, n: int) -> np.ndarray:
    """A real latent: the flow's output for a sentence, cut to n frames."""
    m_p, logs_p, cond = piper.encode(np.array(HELLO_IDS + FILLER_IDS))
    mask = np.ones(m_p.shape[1], np.float32)
    per = durations(piper.sdp.logw(cond, mask, np.zeros((2, mask.size))), mask, 1.0)
    z = piper.flow(expand_prior(m_p, logs_p, per, None, 0.0))
    assert z.shape[1] >= n
    return np.ascontiguousarray(z[:, :n])


@pytest.mark.parametrize("n", [20, 96, 97, 250])
def test_stitched_windows_equal_full_decode(piper_decoders, n: int) -> None:  # type: ignore[no-untyped-def]
    piper, full = piper_decoders
    z = _latent(piper, n)
    ref = full.run(None, {"z": z[None]})[0].reshape(-1)
    got = np.concatenate(list(decode_windowed(z, piper.decode_window, piper.hop)))
    assert got.shape == ref.shape == (n * piper.hop,)
    assert snr_db(ref, got) >= 100.0


@pytest.mark.parametrize("n", [20, 33, 250])
def test_small_first_window_schedule_equals_full_decode(piper_decoders, n: int) -> None:  # type: ignore[no-untyped-def]
    """Every window size the schedules use holds the gate: a static 32-frame
    first window then 96-frame ones (NPU graphs), and the CPU backend's
    any-length graph with its first window and one window for the rest."""
    from daemon.engines.piper.pipeline import CPU_FIRST_WINDOW, CPU_WINDOW

    piper, full = piper_decoders
    z = _latent(piper, n)
    ref = full.run(None, {"z": z[None]})[0].reshape(-1)
    npu = decode_windowed(z, piper.decode_window, piper.hop, 96, 12, first=32)
    cpu = decode_windowed(
        z, piper.decode_any, piper.hop, CPU_WINDOW, 12, first=CPU_FIRST_WINDOW, fit=True
    )
    for got in (npu, cpu):
        assert snr_db(ref, np.concatenate(list(got))) >= 100.0


def test_without_frame_mask_short_windows_are_wrong(piper_decoders) -> None:  # type: ignore[no-untyped-def]
    """The mask is what makes a short window exact: zero padding alone is not."""
    piper, full = piper_decoders
    z = np.random.default_rng(0).standard_normal((192, 30)).astype(np.float32)
    ref = full.run(None, {"z": z[None]})[0].reshape(-1)
    unmasked = np.concatenate(
        list(
            decode_windowed(
                z, lambda w, m: piper.decode_window(w, np.ones_like(m)), piper.hop
            )
        )
    )
    masked = np.concatenate(list(decode_windowed(z, piper.decode_window, piper.hop)))
    assert snr_db(ref, unmasked) < 40.0 < 100.0 <= snr_db(ref, masked)


@pytest.mark.parametrize("n", [20, 100, 140, 170, 200])
def test_every_build_window_size_equals_full_decode(piper_decoders, n: int) -> None:  # type: ignore[no-untyped-def]
    """The >= 100 dB gate for every decoder size a build compiles: together
    these lengths run each of them (the tail test above lists which)."""
    from scripts.piper.convert import ConvertOptions

    o = ConvertOptions()
    assert o.decoder_sizes == SIZES
    piper, full = piper_decoders
    z = _latent(piper, n)
    ref = full.run(None, {"z": z[None]})[0].reshape(-1)
    got = decode_windowed(
        z, piper.decode_window, piper.hop, o.window, o.overlap,
        first=o.first_window, sizes=o.decoder_sizes,
    )  # fmt: skip
    assert snr_db(ref, np.concatenate(list(got))) >= 100.0


def test_first_window_runs_on_the_simulator(
    piper_decoders, tmp_path, pytestconfig
) -> None:  # type: ignore[no-untyped-def]
    """The build's smallest decoder graph (the first window), compiled for the
    HTP simulator (fp16), decodes real voiced frames as the CPU graph does: the
    log-mel bound the engine's simulator tests hold against piper-tts (~5 s).
    Measured: W64 0.039 (SNR 29.4 dB), W96 0.038, W168 0.044; a W32 graph
    0.112 (15.4 dB), which is why the build's first window is 64."""
    pytest.importorskip("onnxruntime_qnn")
    import onnx

    from scripts.common.qnn_compile import compile_onnx, qnn_session
    from scripts.piper import graphs
    from scripts.piper.cuts import find_cuts
    from scripts.piper.oracle import log_mel_l1
    from tests.daemon.engines.piper.test_engine import SIM_MEL_L1
    from tests.piper_bundles import cache_dirs, voice_path

    size = SIZES[0]
    model = onnx.load(voice_path())
    cuts, hop = find_cuts(model), graphs.hop_length(model)
    path = tmp_path / f"dec_W{size}.onnx"
    onnx.save(graphs.decoder_window(model, cuts, size, hop), path)
    done = compile_onnx(
        path, tmp_path, target="simulator", cache_dir=cache_dirs(pytestconfig)[1]
    )
    piper, _ = piper_decoders
    z = np.ascontiguousarray(_latent(piper, 250)[:, -size:])  # voiced frames
    feed = {"z": z[None], "frame_mask": np.ones((1, 1, size), np.float32)}
    cpu = piper.static[size].run(None, feed)[0].reshape(-1)
    sim = qnn_session(done.ctx_onnx_path).run(None, feed)[0].reshape(-1)
    assert log_mel_l1(cpu, sim, 22050) <= SIM_MEL_L1
