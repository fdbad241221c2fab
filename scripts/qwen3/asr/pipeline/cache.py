"""Content-keyed cache of built ASR bundles (tests, demos, benchmarks).

``cached_build(model_dir, root, ...)`` runs the real build_asr once per key and
returns ``root/<key>/bundle`` (layout, locking and pruning:
scripts/qwen3/common/cache.py).  The key covers everything that can
change the bundle: the model files, the pipeline's code (pipeline/code.py
ALL), the options, and the onnxruntime / QNN versions.
"""

from __future__ import annotations

from pathlib import Path

from scripts.qwen3.asr.build import BuildOptions, BuildReport, build
from scripts.qwen3.asr.pipeline.code import all_hash
from scripts.qwen3.asr.pipeline.source import read_model_dir
from scripts.qwen3.common import cache
from scripts.qwen3.common.cache import DONE, KEEP

__all__ = ["DONE", "KEEP", "cache_key", "cached_build"]


def cache_key(model_dir: Path, opts: BuildOptions) -> str:
    """Hash of what can change the bundle: model files, code, options, QNN."""
    files = read_model_dir(model_dir).files
    return cache.content_key(all_hash(), files, cache.key_options(opts))


def cached_build(
    model_dir: Path, root: Path, opts: BuildOptions
) -> tuple[Path, BuildReport | None]:
    """(bundle dir, the build's report, or None when the cache had it) for
    ``opts`` with its model, out and work dirs set under ``root/<key>``."""
    return cache.cached_options_build(
        root, cache_key(model_dir, opts), model_dir, opts, build
    )
