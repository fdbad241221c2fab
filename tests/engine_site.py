"""The test engines (``test-tone``: tests/daemon/tone_engine.py) registered
under ``hexvoice.engines`` through a throw-away dist-info directory: put it on a
daemon's ``PYTHONPATH``, or on ``sys.path`` for engine lookups in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Final

TONE_ENGINE: Final = "test-tone"


def engine_site(site: Path) -> Path:
    """Write the dist-info into ``site`` (a directory) and return ``site``."""
    dist = site / "hexvoice_test_engines-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hexvoice-test-engines\nVersion: 0\n"
    )
    (dist / "entry_points.txt").write_text(
        f"[hexvoice.engines]\n{TONE_ENGINE} = "
        "tests.daemon.tone_engine:ToneEngine\n"
    )
    return site
