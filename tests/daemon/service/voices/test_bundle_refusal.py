"""``hexvoice serve`` refuses at start what ``hexvoice bundle verify`` refuses:
the same ``verify_bundle`` (daemon/sdk/verify.py) runs before any
graph loads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.bundle_edits import compile_foreign, edit_manifest, linked_copy, swap_binary
from tests.daemon.conftest import START_TIMEOUT_S, ServiceVoice, start_daemon


def _refused(tmp: Path, voice: ServiceVoice, **sections) -> str:
    """The daemon's stderr; it must exit non-zero before it gets ready."""
    d = start_daemon(tmp, voice, wait_ready=False, **sections)
    try:
        rc = d.proc.wait(START_TIMEOUT_S)
    finally:
        d.stop()
    assert rc != 0, d.stderr()
    assert "READY=1" not in d.notify.lines()
    return d.stderr()


def test_serve_refuses_a_binary_for_another_htp(
    test_voice: ServiceVoice, onnx_dir, qnn_cache, tmp_path: Path
):
    root = linked_copy(test_voice.bundle, tmp_path / "voice")
    foreign = compile_foreign(onnx_dir / "matmul_tanh.onnx", tmp_path, qnn_cache)
    swap_binary(root, "mm", foreign)  # with its sha256 updated in voice.yaml
    edit_manifest(root, lambda m: m.update(target="simulator"))
    voice = dataclasses.replace(test_voice, bundle=root)
    log = _refused(tmp_path / "d", voice, engine={"backend": "qnn"})
    assert (
        "graphs/mm.bin: compiled for HTP v75, bundle target 'simulator' is HTP v73"
        in log
    )


def test_serve_names_the_htp_mismatch_before_the_io_it_causes(
    test_voice: ServiceVoice, onnx_dir, qnn_cache, tmp_path: Path
):
    # Another graph for another HTP: its I/O mismatches outnumber the line's
    # room, and the arch (the one fix: recompile) must still be named.
    root = linked_copy(test_voice.bundle, tmp_path / "voice")
    foreign = compile_foreign(onnx_dir / "multi_io.onnx", tmp_path, qnn_cache)
    swap_binary(root, "mm", foreign)

    def edit(m: dict) -> None:
        m.update(target="simulator")
        m["graphs"]["mm"].pop("graph", None)  # compare I/O with its only graph

    edit_manifest(root, edit)
    voice = dataclasses.replace(test_voice, bundle=root)
    log = _refused(tmp_path / "d", voice, engine={"backend": "qnn"})
    line = next(x for x in log.splitlines() if "cannot start" in x)
    assert "graphs/mm.bin: compiled for HTP v75, bundle target 'simulator'" in line
    assert line.index("compiled for HTP v75") < line.index("inputs")
    assert "more (hexvoice bundle verify" in line, line


@pytest.mark.parametrize("backend", ["cpu", "qnn"])
def test_serve_refuses_a_manifest_missing_a_graph_its_engine_runs(
    test_voice: ServiceVoice, tmp_path: Path, backend: str
):
    root = linked_copy(test_voice.bundle, tmp_path / "voice")
    edit_manifest(root, lambda m: m.update(graphs={"other": m["graphs"]["mm"]}))
    voice = dataclasses.replace(test_voice, bundle=root)
    log = _refused(tmp_path / "d", voice, engine={"backend": backend})
    assert "voice.yaml (test-tone): graph 'mm' is missing (the engine runs it)" in log
