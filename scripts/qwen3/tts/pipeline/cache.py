"""Content-keyed cache of built Qwen3-TTS bundles (tests, demos, benchmarks).

``cached_build(model_dir, root, opts)`` runs the real build_tts_qwen3 once per
key and returns ``root/<key>/bundle`` (layout, locking and pruning:
scripts/qwen3/common/cache.py).  The key covers the model and codec
files, the pipeline's code (pipeline/code.py ALL), the options and the
onnxruntime / QNN versions.
"""

from __future__ import annotations

from pathlib import Path

from scripts.common.steps import BuildReport
from scripts.qwen3.common import cache
from scripts.qwen3.tts.build import BuildOptions, build
from scripts.qwen3.tts.pipeline.code import all_hash
from scripts.qwen3.tts.pipeline.source import read_model_dir


def cache_key(model_dir: Path, opts: BuildOptions) -> str:
    """Hash of what can change the bundle: model files, code, options, QNN."""
    src = read_model_dir(model_dir, opts.codec)
    return cache.content_key(all_hash(), src.all_files, cache.key_options(opts))


def cached_build(
    model_dir: Path, root: Path, opts: BuildOptions
) -> tuple[Path, BuildReport | None]:
    """(bundle dir, the build's report, or None when the cache had it) for
    ``opts`` with its model, out and work dirs set under ``root/<key>``."""
    return cache.cached_options_build(
        root, cache_key(model_dir, opts), model_dir, opts, build
    )
