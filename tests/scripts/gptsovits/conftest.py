"""Session fixtures: one synthetic voice, loaded models and exported tiny graphs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from scripts.common.build.onnx_export import GraphSpec
from scripts.gptsovits import shapes
from scripts.gptsovits.export import graphs as export
from scripts.gptsovits.models.checkpoints import (
    load_gpt_checkpoint,
    load_sovits_checkpoint,
)
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.synthetic.voice import SyntheticVoice, write_test_voice
from tests.conftest import GSV_VOICES


@pytest.fixture(scope="session")
def synthetic_voice(tmp_path_factory: pytest.TempPathFactory) -> SyntheticVoice:
    return write_test_voice(tmp_path_factory.mktemp("gsv_voice"))


@pytest.fixture(scope="session")
def t2s_model(synthetic_voice: SyntheticVoice) -> T2SModel:
    return T2SModel.from_checkpoint(load_gpt_checkpoint(synthetic_voice.gpt_ckpt))


@pytest.fixture(scope="session")
def sovits_model(synthetic_voice: SyntheticVoice) -> SovitsModel:
    return SovitsModel.from_checkpoint(
        load_sovits_checkpoint(synthetic_voice.sovits_pth)
    )


@pytest.fixture(scope="session")
def tiny_graphs(
    t2s_model: T2SModel,
    sovits_model: SovitsModel,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, GraphSpec]:
    out = tmp_path_factory.mktemp("gsv_onnx")
    specs = export.export_t2s(t2s_model, shapes.TINY, out)
    specs += export.export_vits(sovits_model, shapes.TINY, out)
    return {spec.name: spec for spec in specs}


@pytest.fixture(scope="session")
def tiny_t2s_kv16(
    t2s_model: T2SModel, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, GraphSpec]:
    """The T2S graphs with fp16 K/V inputs/outputs (what the NPU binaries use)."""
    out = tmp_path_factory.mktemp("gsv_onnx_kv16")
    specs = export.export_t2s(t2s_model, shapes.TINY, out, kv_dtype=torch.float16)
    return {spec.name: spec for spec in specs}


@pytest.fixture(scope="session")
def built_voice(request: pytest.FixtureRequest) -> Path:
    """The ``<key>/`` dir of the test voice built end to end by the real build
    with its simulator gates (scripts/tiny-gptsovits; ``gsv_voice``'s dir, the
    gates added), cached by content in pytest's cache dir across sessions."""
    from scripts.gptsovits.synthetic.build import make_test_voice

    root = Path(request.config.cache.mkdir(GSV_VOICES))
    return make_test_voice(root).parent


@pytest.fixture
def source_copy(built_voice: Path, tmp_path: Path) -> Path:
    """A copy of the test voice's upstream installation (``source/``) to change."""
    src = tmp_path / "source"
    shutil.copytree(built_voice / "source", src)
    return src
