"""Qwen3 test bundles (a pytest plugin, listed in tests/conftest.py).

``tiny_asr_bundle``: the real build_asr run on ``tiny_asr_model`` for the
simulator with the smallest buckets the tests use (prefill 128, KV 192), cached
by content under the ``qnn_cache`` directory (scripts/qwen3/asr/cache.py on
scripts/common/build/cache.py), so later sessions reuse it.  It has both the
fp32 ONNX graphs (the CPU backend) and the simulator binaries.
``tiny_asr_eos_bundle``: the same build of ``tiny_asr_eos_model``;
``tiny_asr_odd_bundle``: of ``tiny_asr_odd_model`` (odd dims, padded
vocabulary, moved special ids).  ``asr_context``: the build's context (what
its stages read) over a model.

``tiny_tts_custom_bundle`` / ``tiny_tts_base_bundle``: the real
build_tts_qwen3 on ``tiny_tts_custom`` / ``tiny_tts_base`` for the simulator
(options: ``tiny_tts_options``), cached the same way
(scripts/qwen3/tts/build.py ``cached_build``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from scripts.qwen3.asr.build import BuildOptions
    from scripts.qwen3.asr.pipeline.context import BuildContext

#: The smallest buckets the tiny model's tests need: a 5 s clip is 65 audio +
#: ~15 prompt tokens; 192 KV rows leave 64+ tokens to decode.
TINY_PREFILL: Final = (128,)
TINY_KV: Final = (192,)
BUNDLES_DIR: Final = "qwen3-asr-bundles"
EOS_BUNDLES_DIR: Final = "qwen3-asr-eos-bundles"
ODD_BUNDLES_DIR: Final = "qwen3-asr-odd-bundles"


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


def asr_context(
    model: Path, work: Path, prefill: int = TINY_PREFILL[0], kv: int = TINY_KV[0]
) -> BuildContext:
    """The ASR build's context over ``model`` in ``work`` with one prefill and
    one KV bucket (what its stages read: the model, loaded lazily, the params)."""
    from dataclasses import replace

    from scripts.qwen3.asr.pipeline.context import BuildContext
    from scripts.qwen3.asr.pipeline.source import read_model_dir

    opts = replace(
        tiny_options(),
        model=model,
        out=work / "bundle",
        work=work,
        prefill_buckets=(prefill,),
        kv_buckets=(kv,),
    )
    return BuildContext(opts, read_model_dir(model))


@pytest.fixture(scope="session")
def tiny_asr_bundle(tiny_asr_model: Path, qnn_cache: Path) -> Path:
    """The tiny Qwen3-ASR bundle directory (onnx/ for the CPU backend, graphs/
    compiled for the simulator), built by the real build_asr."""
    pytest.importorskip("onnxruntime_qnn")
    from dataclasses import replace

    from scripts.qwen3.asr.cache import cached_build

    opts = replace(tiny_options(), qnn_cache=qnn_cache)
    bundle, _ = cached_build(tiny_asr_model, qnn_cache / BUNDLES_DIR, opts)
    return bundle


def _cpu_gated_bundle(model: Path, qnn_cache: Path, root: str) -> Path:
    """The tiny bundle's options without the simulator gates (the tiny bundle
    runs them), in its own cache root (the tiny bundle's keeps only a few keys)."""
    pytest.importorskip("onnxruntime_qnn")
    from dataclasses import replace

    from scripts.qwen3.asr.cache import cached_build

    opts = replace(tiny_options(), qnn_cache=qnn_cache, sim_gates=False)
    bundle, _ = cached_build(model, qnn_cache / root, opts)
    return bundle


@pytest.fixture(scope="session")
def tiny_asr_eos_bundle(tiny_asr_eos_model: Path, qnn_cache: Path) -> Path:
    """The bundle of ``tiny_asr_eos_model`` (CPU gates only)."""
    return _cpu_gated_bundle(tiny_asr_eos_model, qnn_cache, EOS_BUNDLES_DIR)


@pytest.fixture(scope="session")
def tiny_asr_odd_bundle(tiny_asr_odd_model: Path, qnn_cache: Path) -> Path:
    """The bundle of ``tiny_asr_odd_model`` (CPU gates only)."""
    return _cpu_gated_bundle(tiny_asr_odd_model, qnn_cache, ODD_BUNDLES_DIR)


# --- Qwen3-TTS -----------------------------------------------------------------
#: The tiny Qwen3-TTS bundles' options: a sentence's non-streaming prompt fits
#: 64 rows; two KV buckets (the talker grows from 96 to 192 rows mid-utterance);
#: streaming codec windows <= 16 frames with contexts given (approximate: 6.9
#: dB from upstream's decode, said in the manifest; the simulator takes ~4 s
#: per codec frame), the simulator gating only the smallest, of 4 frames;
#: codec_325 beside them (upstream's chunk and context: a request that is not
#: streamed decodes as upstream does at any length; on the CPU backend one
#: call is 0.16 s; both bundles' codec_325 are one compiled binary, the same
#: tiny codec); Base clips of 1 or 2 s, and no simulator codec gate (its codec
#: is the CustomVoice bundle's, gated there).
TTS_PREFILL: Final = (64,)
TTS_KV: Final = (96, 192)
TTS_WINDOWS: Final = "4:2,8:4,16:6"
TTS_FIRST_FRAMES: Final = 4
TTS_SIM_CODEC_WINDOWS: Final = (4,)
TTS_XVECTOR_SECONDS: Final = (1.0, 2.0)
TTS_BUNDLES_DIR: Final = "qwen3-tts-bundles"


def tiny_tts_options(kind: str) -> Any:
    """The options of a tiny Qwen3-TTS bundle (model, out and work set by the
    cache; imported here: the build needs torch and qwen_tts)."""
    from scripts.qwen3.tts.build import BuildOptions
    from scripts.qwen3.tts.pipeline.options import parse_windows

    return BuildOptions(
        model=Path("."),
        target="simulator",
        out=Path("."),
        prefill_buckets=TTS_PREFILL,
        kv_buckets=TTS_KV,
        codec_windows=parse_windows(TTS_WINDOWS),
        first_frames=TTS_FIRST_FRAMES,
        xvector_seconds=TTS_XVECTOR_SECONDS,
        name=f"qwen3-tts-tiny-{kind.replace('_', '-')}",
        upstream_codec=True,
        sim_codec=kind != "base",
        sim_codec_windows=TTS_SIM_CODEC_WINDOWS,
    )


def _tts_bundle(model: Path, kind: str, qnn_cache: Path) -> Path:
    pytest.importorskip("onnxruntime_qnn")
    from dataclasses import replace

    from scripts.qwen3.tts.build import cached_build

    opts = replace(tiny_tts_options(kind), qnn_cache=qnn_cache)
    bundle, _ = cached_build(model, qnn_cache / TTS_BUNDLES_DIR, opts)
    return bundle


@pytest.fixture(scope="session")
def tiny_tts_custom_bundle(tiny_tts_custom: Path, qnn_cache: Path) -> Path:
    """The tiny CustomVoice bundle (onnx/ for the CPU backend, graphs/ for the
    simulator), built by the real build_tts_qwen3, simulator gates passed."""
    return _tts_bundle(tiny_tts_custom, "custom_voice", qnn_cache)


@pytest.fixture(scope="session")
def tiny_tts_base_bundle(tiny_tts_base: Path, qnn_cache: Path) -> Path:
    """The tiny Base bundle (x-vector speaker graphs)."""
    return _tts_bundle(tiny_tts_base, "base", qnn_cache)
