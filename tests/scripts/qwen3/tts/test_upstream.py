"""scripts/qwen3/tts/upstream.py and the install that makes qwen-tts importable."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib

from tests.qwen3_fixtures import require_qwen_tts

REPO = Path(__file__).resolve().parents[4]

require_qwen_tts()


def test_import_qwen_tts_gives_upstream_modules_and_stubs_only_a_broken_torchaudio():
    from scripts.qwen3.tts.upstream import STUB_MARK, import_qwen_tts

    up = import_qwen_tts()
    assert import_qwen_tts() is up  # cached
    assert up.Qwen3TTSModel.__module__ == "qwen_tts.inference.qwen3_tts_model"
    assert hasattr(up.modeling, "mel_spectrogram")
    assert hasattr(up.codec_modeling, "Qwen3TTSTokenizerV2Model")
    kaldi = sys.modules["torchaudio.compliance.kaldi"]
    assert getattr(kaldi, STUB_MARK, False) is up.torchaudio_stubbed
    if up.torchaudio_stubbed:
        with pytest.raises(AttributeError, match="stub"):
            kaldi.fbank  # noqa: B018  (the 25 Hz path would fail clearly)


def test_torch_threads_sets_and_restores_the_thread_count():
    import torch

    from scripts.qwen3.tts.upstream import torch_threads

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def _nodeps_pins() -> dict[str, str]:
    text = (REPO / "scripts" / "_venv.sh").read_text()
    line = re.search(r"^HEXVOICE_NODEPS=\((.*)\)$", text, re.M)
    assert line is not None, "scripts/_venv.sh lost HEXVOICE_NODEPS"
    return dict(pin.split("==") for pin in line[1].split())


def test_the_install_script_pins_what_the_venv_runs():
    pins = _nodeps_pins()
    assert set(pins) == {"qwen-tts", "einops"}
    for name, version in pins.items():
        assert metadata.version(name) == version, name
    # both pin transformers and cannot share one resolver run (why it is --no-deps)
    needs = {r.split(";")[0].replace(" ", "") for r in metadata.requires("qwen-tts")}
    asr = {r.split(";")[0].replace(" ", "") for r in metadata.requires("qwen-asr")}
    tts_pin = next(r for r in needs if r.startswith("transformers=="))
    asr_pin = next(r for r in asr if r.startswith("transformers=="))
    assert tts_pin != asr_pin
    assert metadata.version("transformers") == asr_pin.split("==")[1]


def test_pyproject_extras_leave_qwen_tts_to_the_install_script():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    listed = [dep for deps in extras.values() for dep in deps]
    assert not any(dep.startswith("qwen-tts") for dep in listed)
    assert any(dep.startswith("qwen-asr==") for dep in extras["oracle"])


@pytest.mark.parametrize(
    ("extras", "wanted"),
    [
        ("dev", True),
        ("oracle", True),
        ("sim,oracle", True),
        ("sim,piper,demo,export", False),
    ],
)
def test_the_install_script_adds_qwen_tts_exactly_with_the_oracle(extras, wanted):
    script = 'source scripts/_venv.sh && _hexvoice_wants_oracle "$1"'
    rc = subprocess.run(["bash", "-c", script, "-", extras], cwd=REPO).returncode
    assert (rc == 0) is wanted
