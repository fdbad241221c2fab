"""The package's build on the tiny model (conftest ``bundle``): nothing is
read, exported or written until the licence is accepted (the command exits
78 saying how); the bundle verifies, records the licence, every graph of its
buckets, the CPU tables and NeMo's grammars; a second run resumes every
stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from daemon.sdk.license import LicenseNotAccepted

from hexvoice_indextts.engine.params import LICENSE
from hexvoice_indextts.layout import graph_names
from hexvoice_indextts.pipeline.build import build, main
from hexvoice_indextts.pipeline.context import BuildOptions


def test_without_the_licence_nothing_is_read_or_written(tmp_path: Path) -> None:
    opts = BuildOptions(tmp_path / "no-model", tmp_path / "hub", tmp_path / "out")
    with pytest.raises(LicenseNotAccepted) as caught:
        build(opts, [])
    message = str(caught.value)
    assert LICENSE.title in message and "--accept-license bilibili-model-use" in message
    assert "nothing was downloaded or built" in message
    assert list(tmp_path.iterdir()) == []


def test_the_command_refuses_with_exit_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(tmp_path / "m"), "--hub", str(tmp_path), "--out", str(tmp_path / "o")]
    assert main(argv) == 78
    assert "--accept-license bilibili-model-use" in capsys.readouterr().err
    assert main([*argv, "--accept-license", "something-else"]) == 78
    assert "(accepted: something-else)" in capsys.readouterr().err
    # accepted, but no model directory there: a configuration error naming it
    assert main([*argv, "--accept-license", LICENSE.id]) == 78
    assert "expected an IndexTTS-2 model directory" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_bundle_holds_every_graph_and_the_licence(bundle: Any) -> None:
    b, o = bundle.bundle, bundle.options
    assert b.engine == "indextts2" and b.license == LICENSE.id
    assert b.sample_rate == 22050 and b.languages == ("en",)
    names = graph_names(o.utterance_buckets, o.voice_buckets)
    assert tuple(b.graphs) == names and len(names) == 13
    assert all(spec.onnx for spec in b.graphs.values())
    for f in ("cpu/tables.npz", "cpu/voice_tables.npz", "text/bpe.model"):
        assert f in b.files
    assert any(f.startswith("text/nemo/en_tn_") for f in b.files)


def test_a_second_run_resumes_every_stage(bundle: Any) -> None:
    again = build(bundle.options, [LICENSE.id], log=lambda _: None)
    assert again.run.ran == []
    assert again.run.skipped == bundle.run.ran
