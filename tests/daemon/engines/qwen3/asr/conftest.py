"""The tiny Qwen3-ASR bundle loaded on the CPU backend (onnx/) for a module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.sdk.local import LocalEngine, open_engine


@pytest.fixture(scope="module")
def cpu(tiny_asr_bundle: Path) -> Iterator[LocalEngine]:
    with open_engine(tiny_asr_bundle, "cpu") as loaded:
        yield loaded
