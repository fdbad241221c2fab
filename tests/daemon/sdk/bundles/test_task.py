"""The manifest's ``task``: written by every bundle, ``tts`` when absent (manifests
from before ASR bundles), and refused by verify and by loading when the engine
does another task."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from daemon.cli.bundle import main as bundle_cli
from daemon.sdk.bundles.manifest import MANIFEST, Bundle, BundleError
from daemon.sdk.local import open_engine
from daemon.sdk.registry import engine_for
from daemon.sdk.verify import verify_bundle
from tests.bundle_edits import edit_manifest
from tests.daemon import vad_engine
from tests.engine_site import TONE_ENGINE, VAD_ENGINE, engine_site


@pytest.fixture(autouse=True)
def test_engines(tmp_path_factory, monkeypatch) -> None:
    """``test-tone`` (TTS) and ``test-vad`` (ASR) registered in this process."""
    monkeypatch.syspath_prepend(str(engine_site(tmp_path_factory.mktemp("site"))))


@pytest.fixture
def vad_dir(tmp_path: Path, bins, onnx_dir: Path) -> Path:
    """A ``test-vad`` (ASR) bundle around the compiled ``matmul_tanh`` graph."""
    return vad_engine.write_bundle(
        tmp_path / "vad", bins["matmul_tanh"].bin_path, onnx_dir / "matmul_tanh.onnx"
    )


def _manifest(root: Path) -> dict:
    return yaml.safe_load((root / MANIFEST).read_text())


def test_an_asr_bundle_says_so_and_verifies(vad_dir: Path, capsys):
    assert _manifest(vad_dir)["task"] == "asr"
    assert bundle_cli(["info", str(vad_dir)]) == 0
    assert capsys.readouterr().out.startswith(f"vad: engine {VAD_ENGINE} (asr), ")
    bundle = Bundle.load(vad_dir)
    assert bundle.task == "asr" and bundle.to_dict()["task"] == "asr"
    assert verify_bundle(bundle) == []
    assert engine_for(bundle).task == "asr"


def test_a_manifest_without_task_is_a_tts_bundle(vad_dir: Path):
    edit_manifest(vad_dir, lambda m: (m.pop("task"), m.update(engine=TONE_ENGINE)))
    assert "task" not in _manifest(vad_dir)
    bundle = Bundle.load(vad_dir)
    assert bundle.task == "tts"
    assert verify_bundle(bundle) == []


def test_an_asr_bundle_without_task_is_refused_by_its_engine(vad_dir: Path, capsys):
    """An ASR engine never takes a bundle that does not say it is for ASR."""
    edit_manifest(vad_dir, lambda m: m.pop("task"))
    want = (
        f"voice.yaml: task 'tts', but engine {VAD_ENGINE!r} does 'asr': it cannot "
        f"load this bundle"
    )
    assert verify_bundle(Bundle.load(vad_dir), binaries=False) == [want]
    assert bundle_cli(["verify", str(vad_dir)]) == 1
    assert f"FAIL {want}" in capsys.readouterr().out


def test_a_tts_engine_refuses_an_asr_bundle_at_verify_and_at_load(vad_dir: Path):
    edit_manifest(vad_dir, lambda m: m.update(engine=TONE_ENGINE))
    want = (
        f"voice.yaml: task 'asr', but engine {TONE_ENGINE!r} does 'tts': it cannot "
        f"load this bundle"
    )
    bundle = Bundle.load(vad_dir)
    assert verify_bundle(bundle) == [want]
    with pytest.raises(BundleError) as refused:
        engine_for(bundle)
    assert str(refused.value) == want
    # Loading refuses it too, with verification off, before any graph opens.
    with pytest.raises(BundleError, match="does 'tts': it cannot load"):
        with open_engine(bundle, "cpu"):
            pass


def test_an_engine_override_is_checked_against_the_task(vad_dir: Path):
    bundle = Bundle.load(vad_dir)
    with pytest.raises(BundleError, match=f"engine {TONE_ENGINE!r} does 'tts'"):
        engine_for(bundle, TONE_ENGINE)


def test_a_task_nobody_does_names_the_choices(vad_dir: Path, tmp_path: Path):
    root = tmp_path / "copy"
    shutil.copytree(vad_dir, root)
    edit_manifest(root, lambda m: m.update(task="stt"))
    with pytest.raises(BundleError) as refused:
        Bundle.load(root)
    assert str(refused.value) == (
        f"{root / MANIFEST}: task: expected one of ['asr', 'tts'], found 'stt'"
    )
