from __future__ import annotations

import pytest

from daemon.engines.gptsovits.frontend import TextFrontend


@pytest.fixture(scope="session")
def frontend() -> TextFrontend:
    """One warmed-up frontend without a polyphone resolver (pypinyin fallback)."""
    fe = TextFrontend()
    fe.warm_up()
    return fe
