"""Qwen3-ASR test bundles (a pytest plugin, listed in tests/conftest.py).

``tiny_asr_bundle``: the real build_asr run on ``tiny_asr_model`` for the
simulator with the smallest buckets the tests use (prefill 128, KV 192), cached
by content under the ``qnn_cache`` directory (scripts/qwen3/asr/pipeline/
cache.py), so later sessions reuse it.  It has both the fp32 ONNX graphs (the
CPU backend) and the simulator binaries.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

if TYPE_CHECKING:
    from scripts.qwen3.asr.build import BuildOptions

#: The smallest buckets the tiny model's tests need: a 5 s clip is 65 audio +
#: ~15 prompt tokens; 192 KV rows leave 64+ tokens to decode.
TINY_PREFILL: Final = (128,)
TINY_KV: Final = (192,)
BUNDLES_DIR: Final = "qwen3-asr-bundles"


def tiny_options() -> BuildOptions:
    """The options of the tiny bundle (model, out and work set by the cache;
    imported here: the build needs torch and qwen_asr)."""
    from scripts.qwen3.asr.build import BuildOptions

    return BuildOptions(
        model=Path("."),
        target="simulator",
        out=Path("."),
        prefill_buckets=TINY_PREFILL,
        kv_buckets=TINY_KV,
        name="qwen3-asr-tiny",
    )


@pytest.fixture(scope="session")
def tiny_asr_bundle(tiny_asr_model: Path, qnn_cache: Path) -> Path:
    """The tiny Qwen3-ASR bundle directory (onnx/ for the CPU backend, graphs/
    compiled for the simulator), built by the real build_asr."""
    pytest.importorskip("onnxruntime_qnn")
    from dataclasses import replace

    from scripts.qwen3.asr.pipeline.cache import cached_build

    opts = replace(tiny_options(), qnn_cache=qnn_cache)
    bundle, _ = cached_build(tiny_asr_model, qnn_cache / BUNDLES_DIR, opts)
    return bundle
