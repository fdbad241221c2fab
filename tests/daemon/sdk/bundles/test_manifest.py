"""Bundle manifests: load, verify hashes, binary I/O, each binary's HTP target and
the engine's graphs; refuse unsafe paths."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import yaml

import qnnrt
from daemon.cli.bundle import main as bundle_cli
from daemon.sdk.bundles.manifest import (
    MANIFEST,
    Bundle,
    BundleError,
    GraphSpec,
    TensorSpec,
    pack,
    sha256_file,
    tensor_spec,
    unpack,
    write_manifest,
)
from daemon.sdk.registry import engine_class
from daemon.sdk.verify import TargetMismatch, detect_board, verify_bundle
from daemon.targets.profile import load_profile
from tests.bundle_edits import (
    compile_foreign,
    edit_manifest,
    linked_copy,
    swap_binary,
)
from tests.engine_site import TONE_ENGINE, engine_site, twins_bundle


@pytest.fixture(autouse=True)
def tone_engine(tmp_path_factory, monkeypatch) -> None:
    """The ``test-tone`` engine registered in this process: verify asks it which
    graphs it runs (one, ``mm``)."""
    site = engine_site(tmp_path_factory.mktemp("engine_site"))
    monkeypatch.syspath_prepend(str(site))


@pytest.fixture
def bundle_dir(tmp_path: Path, bins) -> Path:
    root = tmp_path / "voice"
    (root / "graphs").mkdir(parents=True)
    (root / "cpu").mkdir()
    bin_path = root / "graphs" / "matmul.bin"
    shutil.copyfile(bins["matmul_tanh"].bin_path, bin_path)
    (root / "cpu" / "table.npy").write_bytes(b"\x93NUMPY fake table bytes")
    (g,) = qnnrt.read_binary_info(bin_path).graphs
    spec = GraphSpec(
        key="mm",
        file="graphs/matmul.bin",
        sha256=sha256_file(bin_path),
        inputs=tuple(tensor_spec(t) for t in g.inputs),
        outputs=tuple(tensor_spec(t) for t in g.outputs),
    )
    bundle = Bundle(
        root=root,
        engine=TONE_ENGINE,
        name="tiny",
        sample_rate=16000,
        languages=("en",),
        graphs={"mm": spec},
        files={"cpu/table.npy": sha256_file(root / "cpu" / "table.npy")},
        qnn_sdk="2.51.0",
        target="simulator",
    )
    write_manifest(bundle)
    return root


def test_round_trip_and_verify_clean(bundle_dir: Path):
    b = Bundle.load(bundle_dir)
    assert b.graphs["mm"].inputs == (TensorSpec("x", "float32", (1, 64)),)
    assert verify_bundle(b) == []


def test_a_manifest_without_graph_names_reads_as_before(bundle_dir: Path):
    """Manifests written before graph names: each entry is its file's only graph."""
    m = yaml.safe_load((bundle_dir / MANIFEST).read_text())
    assert "graph" not in m["graphs"]["mm"]
    b = Bundle.load(bundle_dir)
    assert b.graphs["mm"].graph is None
    assert verify_bundle(b) == []


def test_a_named_graph_is_checked_against_its_binary(bundle_dir: Path, capsys):
    (g,) = qnnrt.read_binary_info(bundle_dir / "graphs" / "matmul.bin").graphs
    edit_manifest(bundle_dir, lambda m: m["graphs"]["mm"].update(graph=g.name))
    assert Bundle.load(bundle_dir).graphs["mm"].graph == g.name
    assert verify_bundle(Bundle.load(bundle_dir)) == []
    edit_manifest(bundle_dir, lambda m: m["graphs"]["mm"].update(graph="decode"))
    want = (
        f"graphs/matmul.bin (mm): no graph 'decode' in the binary; it holds {[g.name]}"
    )
    assert verify_bundle(Bundle.load(bundle_dir)) == [want]
    assert bundle_cli(["verify", str(bundle_dir)]) == 1
    assert f"FAIL {want}" in capsys.readouterr().out


def test_flipped_byte_is_caught(bundle_dir: Path):
    p = bundle_dir / "graphs" / "matmul.bin"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x01
    p.write_bytes(bytes(data))
    problems = verify_bundle(Bundle.load(bundle_dir))
    assert problems == [
        "graphs/matmul.bin: sha256 mismatch (file changed or corrupted)"
    ]


def test_missing_file_is_caught(bundle_dir: Path):
    (bundle_dir / "cpu" / "table.npy").unlink()
    assert verify_bundle(Bundle.load(bundle_dir)) == ["cpu/table.npy: missing"]


def test_wrong_io_shape_in_manifest_is_caught(bundle_dir: Path):
    m = yaml.safe_load((bundle_dir / MANIFEST).read_text())
    m["graphs"]["mm"]["inputs"][0]["shape"] = [1, 32]
    (bundle_dir / MANIFEST).write_text(yaml.safe_dump(m))
    (problem,) = verify_bundle(Bundle.load(bundle_dir))
    assert (
        "'x' is float32[1, 64] in the binary, float32[1, 32] in the manifest" in problem
    )


def test_renamed_output_is_caught(bundle_dir: Path):
    m = yaml.safe_load((bundle_dir / MANIFEST).read_text())
    m["graphs"]["mm"]["outputs"][0]["name"] = "output_0"
    (bundle_dir / MANIFEST).write_text(yaml.safe_dump(m))
    problems = verify_bundle(Bundle.load(bundle_dir))
    assert any("binary has 'y', manifest does not" in p for p in problems)


@pytest.mark.parametrize("bad", ["../outside.bin", "/etc/passwd", "graphs/../../x"])
def test_paths_cannot_escape_the_bundle(bundle_dir: Path, bad: str):
    edit_manifest(bundle_dir, lambda m: m["graphs"]["mm"].update(file=bad))
    with pytest.raises(BundleError) as refused:
        Bundle.load(bundle_dir)
    assert str(refused.value) == (
        f"{bundle_dir / MANIFEST}: graphs['mm'].file: expected a relative path "
        f"inside the bundle, found {bad!r}"
    )
    edit_manifest(bundle_dir, lambda m: m["graphs"]["mm"].update(file="graphs/m.bin"))
    edit_manifest(bundle_dir, lambda m: m["files"].update({bad: "0" * 64}))
    with pytest.raises(BundleError, match=f"files\\[{bad!r}\\]: expected a relative"):
        Bundle.load(bundle_dir)


@pytest.mark.parametrize(
    "mutate,message",
    [
        (
            lambda m: m.pop("engine"),
            "engine: expected a non-empty string, found nothing (missing field)",
        ),
        (lambda m: m.update(format=99), "format: expected one of [1], found 99"),
        (
            lambda m: m.update(sample_rate="fast"),
            "sample_rate: expected an integer, found 'fast'",
        ),
        (
            lambda m: m["graphs"]["mm"]["inputs"][0].update(shape=[0]),
            "graphs['mm'].inputs[0].shape[0]: expected an integer > 0, found 0",
        ),
        (
            lambda m: m["graphs"]["mm"].update(graph=""),
            "graphs['mm'].graph: expected a non-empty string or null, found ''",
        ),
        (
            lambda m: m["graphs"]["mm"].update(grpah="decode"),
            "graphs['mm']: expected only the fields ['file', 'graph', 'inputs', "
            "'onnx', 'onnx_sha256', 'outputs', 'sha256'], found unknown field(s) "
            "['grpah']",
        ),
    ],
    ids=["missing", "format", "type", "shape", "empty-graph", "unknown"],
)
def test_malformed_manifest_names_the_field(bundle_dir: Path, mutate, message):
    edit_manifest(bundle_dir, mutate)
    with pytest.raises(BundleError) as refused:
        Bundle.load(bundle_dir)
    assert str(refused.value) == f"{bundle_dir / MANIFEST}: {message}"


def test_null_means_empty_or_absent(bundle_dir: Path):
    edit_manifest(bundle_dir, lambda m: m.update(params=None, voices={"joe": None}))
    b = Bundle.load(bundle_dir)
    assert b.params == {} and b.voices == {"joe": {}} and b.target == "simulator"
    assert b.graphs["mm"].key == "mm" and b.root == bundle_dir


def test_not_a_bundle(tmp_path: Path):
    with pytest.raises(BundleError, match="no voice.yaml"):
        Bundle.load(tmp_path)
    (tmp_path / MANIFEST).write_text("graphs: [unclosed")
    with pytest.raises(BundleError, match="invalid YAML"):
        Bundle.load(tmp_path)


def test_tar_round_trip(bundle_dir: Path, tmp_path: Path):
    tar = pack(bundle_dir, tmp_path / "voice.tar")
    out = unpack(tar, tmp_path / "unpacked")
    assert verify_bundle(Bundle.load(out)) == []


# --- item 6: each binary's HTP arch / SoC against the target and the board ----
#: the tiny matmul compiled for HTP v75 / SoC 57, checked against target simulator
FOREIGN = [
    "graphs/matmul.bin: compiled for HTP v75, bundle target 'simulator' is HTP v73",
    "graphs/matmul.bin: compiled for SoC model 57, bundle target 'simulator' "
    "accepts [66, 43]",
]


@pytest.fixture(scope="module")
def foreign_bin(onnx_dir, qnn_cache, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("v75")
    return compile_foreign(onnx_dir / "matmul_tanh.onnx", out, qnn_cache)


def test_binary_for_another_htp_fails_verify_naming_found_and_expected(
    bundle_dir: Path, foreign_bin: Path, tmp_path: Path, capsys
):
    swap_binary(bundle_dir, "mm", foreign_bin)  # its sha256 is right
    assert verify_bundle(Bundle.load(bundle_dir)) == FOREIGN
    tar = pack(bundle_dir, tmp_path / "voice.tar")
    for path in (bundle_dir, tar):
        assert bundle_cli(["verify", str(path)]) == 1
        out = capsys.readouterr().out
        assert [ln for ln in out.splitlines() if ln.startswith("FAIL")] == [
            f"FAIL {p}" for p in FOREIGN
        ]
    # hashes only: nothing reads the binaries (no QNN libraries needed)
    assert verify_bundle(Bundle.load(bundle_dir), binaries=False) == []


def test_on_a_board_the_board_profile_is_checked_too(bundle_dir: Path):
    qcs8550 = load_profile("qcs8550")
    assert verify_bundle(Bundle.load(bundle_dir), board=qcs8550) == []
    only_66 = dataclasses.replace(
        qcs8550, htp=dataclasses.replace(qcs8550.htp, binary_soc_models=(66,))
    )
    (problem,) = verify_bundle(Bundle.load(bundle_dir), board=only_66)
    assert problem == (
        "graphs/matmul.bin: compiled for SoC model 43, this board (qcs8550) "
        "accepts [66]"
    )
    assert isinstance(problem, TargetMismatch)  # the doctor says: recompile


def test_the_board_is_detected_from_its_soc_id(tmp_path: Path):
    assert detect_board(tmp_path) is None  # no sysfs: x86, the simulator
    soc_id = tmp_path / "sys/devices/soc0/soc_id"
    soc_id.parent.mkdir(parents=True)
    soc_id.write_text("603\n")
    board = detect_board(tmp_path)
    assert board is not None and board.name == "qcs8550"
    soc_id.write_text("519\n")  # another Qualcomm SoC: no profile, not guessed
    assert detect_board(tmp_path) is None


def test_a_target_no_profile_describes_is_a_problem(bundle_dir: Path):
    edit_manifest(bundle_dir, lambda m: m.update(target="sm8650"))
    assert verify_bundle(Bundle.load(bundle_dir)) == [
        "voice.yaml: target 'sm8650' is not a known HTP target (qcs8550, "
        "simulator); its binaries cannot be checked"
    ]


# --- item 7: the graphs the engine runs (Engine.requirements) -----------------
def test_a_graph_the_engine_needs_missing_from_the_manifest(
    bundle_dir: Path, tmp_path: Path, capsys
):
    edit_manifest(bundle_dir, lambda m: m["graphs"].pop("mm"))
    want = "voice.yaml (test-tone): graph 'mm' is missing (the engine runs it)"
    assert verify_bundle(Bundle.load(bundle_dir)) == [want]
    assert verify_bundle(Bundle.load(bundle_dir), binaries=False) == [want]
    tar = pack(bundle_dir, tmp_path / "voice.tar")
    assert bundle_cli(["verify", str(tar)]) == 1
    assert f"FAIL {want}" in capsys.readouterr().out


def test_an_engine_nobody_installed_is_a_problem(bundle_dir: Path):
    edit_manifest(bundle_dir, lambda m: m.update(engine="nope"))
    (problem,) = verify_bundle(Bundle.load(bundle_dir))
    assert problem.startswith("voice.yaml: no engine 'nope' registered")


@pytest.fixture(scope="module")
def piper_voice(request) -> Path:
    from tests.piper_bundles import CPU_OPTIONS, bundle_dir

    return bundle_dir(request.config, CPU_OPTIONS)


@pytest.fixture(scope="module")
def gsv_bundle_dir(gsv_voice: Path) -> Path:
    return gsv_voice / "bundle"


def _shape(graph: str, tensor: str, shape: list[int]):
    def edit(m):
        g = m["graphs"][graph]
        (t,) = [t for t in g["inputs"] + g["outputs"] if t["name"] == tensor]
        t["shape"] = shape

    return edit


@pytest.mark.parametrize(
    "voice,edit,problem",
    [
        (
            "piper_voice",
            lambda m: m["graphs"].pop("flow_F256"),
            "graph 'flow_F256' is missing (the engine runs it)",
        ),
        (
            "piper_voice",
            _shape("dec_W96", "frame_mask", [1, 1, 95]),
            "graph dec_W96: 'frame_mask' is [1, 1, 95], the engine uses [1, 1, 96]",
        ),
        (
            "gsv_bundle_dir",
            lambda m: m["graphs"].pop("vits_gen"),
            "graph 'vits_gen' is missing (the engine runs it)",
        ),
        (
            "gsv_bundle_dir",
            _shape("t2s_decode_192", "mask", [1, 1, 1, 191]),
            "graph t2s_decode_192: 'mask' is [1, 1, 1, 191], the engine uses "
            "[1, 1, 1, 192]",
        ),
    ],
    ids=["piper-missing", "piper-shape", "gsv-missing", "gsv-shape"],
)
def test_verify_and_the_engines_load_refuse_the_same_manifest(
    request, tmp_path: Path, voice: str, edit, problem: str
):
    src = Path(request.getfixturevalue(voice))
    root = linked_copy(src, tmp_path / "voice")
    edit_manifest(root, edit)
    bundle = Bundle.load(root)
    want = f"voice.yaml ({bundle.engine}): {problem}"
    assert verify_bundle(bundle, binaries=False) == [want]
    # The engine's own load: the manifest's specs are what a QNN runner exposes.
    with pytest.raises(BundleError) as refused:
        engine_class(bundle.engine)().load(bundle, bundle.graphs)
    assert problem in str(refused.value)


@pytest.mark.parametrize("voice", ["piper_voice", "gsv_bundle_dir"])
def test_real_bundles_meet_their_engines_needs(request, voice: str):
    bundle = Bundle.load(request.getfixturevalue(voice))
    assert verify_bundle(bundle, binaries=False) == []


# --- GraphSpec(file, graph): several graphs of one binary ---------------------
@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    pytest.importorskip("onnxruntime_qnn")
    from tests.qnnrt import tiny_models as tm

    return tm.twin_matmuls(tmp_path_factory.mktemp("twins"))


@pytest.fixture
def twins_dir(tmp_path: Path, twins) -> Path:
    """Graphs ``mm`` and ``mm_sigmoid`` of ONE binary, for the test-tone engine."""
    return twins_bundle(tmp_path / "twins", twins)


def test_two_graphs_of_one_binary_verify_and_are_hashed_once(twins_dir: Path):
    b = Bundle.load(twins_dir)
    assert [g.file for g in b.graphs.values()] == ["graphs/twins.bin"] * 2
    assert verify_bundle(b) == []
    p = twins_dir / "graphs" / "twins.bin"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x01
    p.write_bytes(bytes(data))
    assert verify_bundle(Bundle.load(twins_dir)) == [
        "graphs/twins.bin: sha256 mismatch (file changed or corrupted)"
    ]


def test_verify_refuses_a_graph_the_binary_lacks(twins_dir: Path, twins, capsys):
    edit_manifest(twins_dir, lambda m: m["graphs"]["mm"].update(graph="prefill"))
    want = (
        f"graphs/twins.bin (mm): no graph 'prefill' in the binary; it holds "
        f"{list(twins.graphs)}"
    )
    assert verify_bundle(Bundle.load(twins_dir)) == [want]
    assert bundle_cli(["verify", str(twins_dir)]) == 1
    out = capsys.readouterr().out
    assert [ln for ln in out.splitlines() if ln.startswith("FAIL")] == [f"FAIL {want}"]
    assert "(1 files, 2 graphs)" in out


def test_an_unnamed_graph_of_a_shared_binary_is_ambiguous(twins_dir: Path, twins):
    edit_manifest(twins_dir, lambda m: m["graphs"]["mm"].pop("graph"))
    assert verify_bundle(Bundle.load(twins_dir)) == [
        f"graphs/twins.bin (mm): 2 graphs {list(twins.graphs)}; the manifest must "
        f"name one (graph:)"
    ]


def test_entries_of_one_file_must_agree_on_its_sha256(twins_dir: Path):
    edit_manifest(twins_dir, lambda m: m["graphs"]["mm"].update(sha256="0" * 64))
    with pytest.raises(
        BundleError,
        match="graphs.mm and graphs.mm_sigmoid name graphs/twins.bin with different",
    ):
        Bundle.load(twins_dir)
