"""Bundle checks and the real NPU run on the x86 HTP simulator."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from board.bundle_checks import diagnose
from board.checks import ERROR, OK, SKIP, WARNING
from board.target import BoardTarget
from daemon.sdk.bundles.manifest import MANIFEST
from tests.bundle_edits import compile_foreign, edit_manifest, swap_binary


def _manifest(voice: Path, **changes) -> None:
    m = yaml.safe_load((voice / MANIFEST).read_text())
    m.update(changes)
    (voice / MANIFEST).write_text(yaml.safe_dump(m))


def test_intact_bundle(run_check, simulator, voice):
    (f,) = run_check("bundle", simulator, bundle=voice)
    assert f.level == OK
    assert f.message == (
        "tiny (test-tone): 1 graphs, 2 files; hashes and graph I/O match; the "
        "engine has every graph it runs"
    )
    (t,) = run_check("bundle-target", simulator, bundle=voice)
    assert t.level == OK and t.message == "1 graphs for HTP v73"


def test_npu_run_executes_the_smallest_graph(run_check, simulator, voice):
    (f,) = run_check("npu-run", simulator, bundle=voice)
    assert f.level == OK, f
    assert f.message.startswith("loaded graphs/matmul.bin (56 KiB) and ran mm once")


def test_graphs_of_one_binary_are_checked_and_run_by_name(
    run_check, simulator, twins_voice: Path
):
    (f,) = run_check("bundle", simulator, bundle=twins_voice)
    assert f.level == OK, f
    assert f.message.startswith("twins (test-tone): 2 graphs, 1 files; hashes and")
    (t,) = run_check("bundle-target", simulator, bundle=twins_voice)
    assert t.level == OK and t.message == "2 graphs for HTP v73"
    (run,) = run_check("npu-run", simulator, bundle=twins_voice)
    assert run.level == OK, run
    assert run.message.startswith("loaded graphs/twins.bin (")
    assert " and ran mm once" in run.message
    edit_manifest(twins_voice, lambda m: m["graphs"]["mm"].update(graph="nope"))
    (f,) = run_check("bundle", simulator, bundle=twins_voice)
    assert f.level == ERROR
    assert f.message.startswith("graphs/twins.bin (mm): no graph 'nope' in the binary")


def test_no_bundle_skips_the_bundle_checks(run_check, simulator):
    for name in ("bundle", "bundle-target", "npu-run"):
        (f,) = run_check(name, simulator)
        assert f.level == SKIP and "no --bundle" in f.message


def test_corrupted_file_is_named_and_npu_run_is_skipped(run_check, simulator, voice):
    (voice / "table.npy").write_bytes(b"\x93NUMPY other bytes")
    (f,) = run_check("bundle", simulator, bundle=voice)
    assert f.level == ERROR
    assert f.message == "table.npy: sha256 mismatch (file changed or corrupted)"
    assert "hexvoice bundle verify" in f.fix
    (run,) = run_check("npu-run", simulator, bundle=voice)
    assert run.level == SKIP  # never feed a damaged binary to the DSP


def test_not_a_bundle(run_check, simulator, tmp_path: Path):
    (f,) = run_check("bundle", simulator, bundle=tmp_path)
    assert f.level == ERROR and "no voice.yaml" in f.message and "--bundle" in f.fix


def test_binary_for_another_soc_is_an_error(run_check, simulator, voice):
    only_66 = dataclasses.replace(
        simulator, htp=dataclasses.replace(simulator.htp, binary_soc_models=(66,))
    )
    (f,) = run_check("bundle-target", only_66, bundle=voice)
    assert f.level == ERROR
    assert (
        f.message
        == "graphs/matmul.bin: compiled for SoC model 43, this board (simulator) "
        "accepts [66]"
    )
    assert "--target simulator" in f.fix


def test_binary_needing_more_vtcm_than_the_htp_has(run_check, simulator, voice):
    small = dataclasses.replace(
        simulator, htp=dataclasses.replace(simulator.htp, vtcm_bytes=1 << 20)
    )
    (f,) = run_check("bundle-target", small, bundle=voice)
    assert f.level == ERROR and "MB VTCM, this board (simulator) has 1 MB" in f.message


def test_bundle_for_another_target_warns(run_check, simulator, voice):
    _manifest(voice, target="qcs8550")  # runs here too, but is not ours
    only_ours = dataclasses.replace(
        simulator, htp=dataclasses.replace(simulator.htp, bundle_targets=("sim",))
    )
    (f,) = run_check("bundle-target", only_ours, bundle=voice)
    assert f.level == WARNING and "bundle target 'qcs8550'" in f.message
    _manifest(voice, target="sm8650")  # no profile knows what it needs
    w, e = run_check("bundle-target", simulator, bundle=voice)
    assert w.level == WARNING and "bundle target 'sm8650'" in w.message
    assert e.level == ERROR and "'sm8650' is not a known HTP target" in e.message


def test_binary_for_another_htp_is_a_recompile_not_a_recopy(
    run_check, simulator, voice, onnx_dir, qnn_cache, tmp_path
):
    foreign = compile_foreign(onnx_dir / "matmul_tanh.onnx", tmp_path, qnn_cache)
    swap_binary(voice, "mm", foreign)  # with its sha256 updated
    errors = run_check("bundle-target", simulator, bundle=voice)
    assert [(f.level, f.message) for f in errors] == [
        (
            ERROR,
            "graphs/matmul.bin: compiled for HTP v75, bundle target 'simulator' is "
            "HTP v73",
        ),
        (
            ERROR,
            "graphs/matmul.bin: compiled for SoC model 57, bundle target "
            "'simulator' accepts [66, 43]",
        ),
    ]
    assert all("recompile the bundle for HTP v73" in f.fix for f in errors)
    (intact,) = run_check("bundle", simulator, bundle=voice)  # said once, above
    assert intact.level == OK
    (run,) = run_check("npu-run", simulator, bundle=voice)
    assert run.level == SKIP  # never feed the DSP a binary for another HTP


def test_a_graph_the_engine_needs_is_missing(run_check, simulator, voice):
    edit_manifest(voice, lambda m: m.update(graphs={"matmul": m["graphs"]["mm"]}))
    (f,) = run_check("bundle", simulator, bundle=voice)
    assert f.level == ERROR
    assert (
        f.message
        == "voice.yaml (test-tone): graph 'mm' is missing (the engine runs it)"
    )


@pytest.mark.parametrize(
    "text,code,cause,fix",
    [
        (
            "Dsp startup: Unsupported SoC model (SnapdragonModel): 66\n"
            "deviceCreate failed",
            None,
            "wrong QNN library build",
            "lib/aarch64-oe-linux-gcc11.2",
        ),
        (
            "createUnsignedPD unsigned PD or DSPRPC_GET_DSP_INFO not supported\n"
            "openSessionForPriority failed 0x00000200",
            None,
            "cannot open the DSP device node",
            "sudo usermod -aG system hexvoice",
        ),
        ("Stub lib id mismatch", None, "different QNN SDKs", "install.sh --qairt"),
        (
            "Failed to load libQnnHtpV73Skel.so",
            None,
            "stub or skel failed to load",
            "ADSP_LIBRARY_PATH",
        ),
        ("backendCreate failed", 1009, "stub or skel", "LD_LIBRARY_PATH"),
        ("contextCreateFromBinary failed", 5000, "another QNN SDK", "recompile"),
        ("Failed to find available PD for contextId 4", None, "memory", "stop other"),
    ],
)
def test_known_board_failures_name_their_fix(qcs8550, text, code, cause, fix):
    found = diagnose(text, code, BoardTarget(profile=qcs8550))
    assert found is not None and cause in found[0] and fix in found[1]


def test_unknown_failures_are_not_guessed(qcs8550):
    assert diagnose("graphExecute failed", 6004, BoardTarget(profile=qcs8550)) is None
