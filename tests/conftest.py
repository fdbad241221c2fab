"""Suite-wide fixtures: one compile of every tiny graph per run, cached by content."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    on_board = platform.machine() == "aarch64" and os.path.exists("/dev/adsprpc-smd")
    skip = pytest.mark.skip(reason="needs a QCS8550 board")
    for item in items:
        if "board" in item.keywords and not on_board:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def qnn_cache(request: pytest.FixtureRequest) -> Path:
    """Compiled-binary cache (content-keyed; survives between local runs)."""
    return Path(request.config.cache.mkdir("qnn-bins"))
