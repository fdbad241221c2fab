from __future__ import annotations

from collections.abc import Iterator

import pytest

import qnnrt


@pytest.fixture
def backend() -> Iterator[qnnrt.Backend]:
    with qnnrt.Backend() as be:
        yield be
