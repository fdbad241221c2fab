from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import qnnrt
from tests.qnnrt.cdsprpc_stub import build


@pytest.fixture
def backend() -> Iterator[qnnrt.Backend]:
    with qnnrt.Backend() as be:
        yield be


@pytest.fixture(scope="session")
def cdsprpc_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the compiled libcdsprpc.so stand-in (cdsprpc_stub)."""
    out = tmp_path_factory.mktemp("cdsprpc")
    build(out)
    return out
