"""The synthetic test voice (built by the real pipeline), its torch modules, and
engines loaded on each backend, once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.local import open_engine


@pytest.fixture(scope="session")
def gsv_bundle(gsv_voice: Path) -> Bundle:
    return Bundle.load(gsv_voice / "bundle")


@pytest.fixture(scope="session")
def t2s_model(gsv_voice: Path):
    from scripts.gptsovits.models.checkpoints import load_gpt_checkpoint
    from scripts.gptsovits.models.t2s import T2SModel

    (ckpt,) = (gsv_voice / "source" / "GPT_weights_v2Pro").glob("*.ckpt")
    return T2SModel.from_checkpoint(load_gpt_checkpoint(ckpt))


@pytest.fixture(scope="session")
def sovits_model(gsv_voice: Path):
    from scripts.gptsovits.models.checkpoints import load_sovits_checkpoint
    from scripts.gptsovits.models.sovits import SovitsModel

    (pth,) = (gsv_voice / "source" / "SoVITS_weights_v2Pro").glob("*.pth")
    return SovitsModel.from_checkpoint(load_sovits_checkpoint(pth))


def _engine(bundle: Bundle, backend: str) -> Iterator[GptSovitsEngine]:
    with open_engine(bundle, backend, warmup=True) as (engine, _):
        assert isinstance(engine, GptSovitsEngine)
        yield engine


@pytest.fixture(scope="session")
def cpu_engine(gsv_bundle: Bundle) -> Iterator[GptSovitsEngine]:
    yield from _engine(gsv_bundle, "cpu")


@pytest.fixture(scope="session")
def sim_engine(gsv_bundle: Bundle) -> Iterator[GptSovitsEngine]:
    """The same bundle on the x86 HTP simulator (slow: seconds per graph call)."""
    yield from _engine(gsv_bundle, "qnn")
