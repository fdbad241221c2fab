"""Content-keyed cache of built ASR bundles (tests, demos, benchmarks).

``cached_build(model_dir, root, opts)`` runs the real build once per key and
returns ``root/<key>/bundle`` (layout, locking and pruning:
scripts/common/build/cache.py).  The key covers everything that can change
the bundle: the model files, the code the build's declaration can run, the
options, and the onnxruntime / QNN versions.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from scripts.common.build import cache
from scripts.qwen3.asr import build as declaration
from scripts.qwen3.asr.pipeline.source import read_model_dir
from scripts.qwen3.common.context import Qwen3Options
from scripts.qwen3.common.stages import Built


def cache_key(model_dir: Path, opts: Qwen3Options) -> str:
    """Hash of what can change the bundle: model files, code, options, QNN."""
    files = read_model_dir(model_dir).files
    return cache.content_key([declaration.__name__], files, cache.key_options(opts))


def cached_build(
    model_dir: Path, root: Path, opts: Qwen3Options
) -> tuple[Path, Built | None]:
    """(bundle dir, what the build made, or None when the cache had it) for
    ``opts`` with its model, out and work dirs set under ``root/<key>``."""

    def build(out: Path, work: Path) -> Built:
        return declaration.build(
            replace(opts, model=Path(model_dir), out=out, work=work)
        )

    return cache.cached_build(root, cache_key(model_dir, opts), build)
