"""The test engines registered under ``hexvoice.engines`` through a throw-away
dist-info directory: put it on a daemon's ``PYTHONPATH``, or on ``sys.path`` for
engine lookups in this process.

- ``test-tone`` (TTS): tests/daemon/tone_engine.py
- ``test-vad`` (ASR): tests/daemon/vad_engine.py
- ``test-licensed-tone`` (TTS): the tone engine under a licence to accept
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

TONE_ENGINE: Final = "test-tone"
VAD_ENGINE: Final = "test-vad"
LICENSED_ENGINE: Final = "test-licensed-tone"
#: engine id -> entry-point object reference
TEST_ENGINES: Final = {
    TONE_ENGINE: "tests.daemon.tone_engine:ToneEngine",
    VAD_ENGINE: "tests.daemon.vad_engine:VadEngine",
    LICENSED_ENGINE: "tests.daemon.tone_engine:LicensedToneEngine",
}


def engine_site(site: Path) -> Path:
    """Write the dist-info into ``site`` (a directory) and return ``site``."""
    dist = site / "hexvoice_test_engines-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hexvoice-test-engines\nVersion: 0\n"
    )
    lines = "".join(f"{name} = {ref}\n" for name, ref in TEST_ENGINES.items())
    (dist / "entry_points.txt").write_text(f"[hexvoice.engines]\n{lines}")
    return site


def twins_bundle(root: Path, shared: Any) -> Path:
    """A ``test-tone`` bundle in ``root`` whose graphs ``mm`` and ``mm_sigmoid``
    are the two graphs of ONE binary (``tiny_models.twin_matmuls``)."""
    from scripts.common import bundling

    names = dict(zip(("mm", "mm_sigmoid"), shared.graphs, strict=True))
    bundling.finish(
        root,
        engine=TONE_ENGINE,
        name=root.name,
        sample_rate=16000,
        languages=("en",),
        graphs=bundling.add_shared(root, root.name, shared.bin_path, names),
        target="simulator",
    )
    return root
