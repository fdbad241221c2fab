"""Content-keyed cache of built ASR bundles (tests, demos, benchmarks).

``cached_build(model_dir, root, ...)`` runs the real build_asr once per key and
returns ``root/<key>/bundle``.  The key covers everything that can change the
bundle: the model files, the pipeline's code (pipeline/code.py ALL), the options,
and the onnxruntime / QNN versions.  Layout of ``root/<key>/``::

    bundle/      the bundle (voice.yaml, graphs/, onnx/, cpu/, text/)
    bundle.tar   the same, packed
    work/        the pipeline's work dir (state.json, onnx, binaries)
    DONE         written last: the build finished and verified

One builder per key at a time (an flock on ``root/lock``); the others wait and
then find it done, so concurrent test sessions share one build.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Final

from scripts.common.qnn_compile import qnn_sdk_version
from scripts.common.steps import hash_path
from scripts.qwen3.asr.build import BuildOptions, BuildReport, build
from scripts.qwen3.asr.pipeline.code import all_hash
from scripts.qwen3.asr.pipeline.source import read_model_dir

DONE: Final = "DONE"
#: keys kept under one root: enough for the option sets one test run uses
KEEP: Final = 3


def cache_key(model_dir: Path, opts: BuildOptions) -> str:
    """Hash of what can change the bundle: model files, code, options, QNN."""
    import onnxruntime

    h = hashlib.sha256(all_hash().encode())
    for path in read_model_dir(model_dir).files:
        h.update(f"{path.name}={hash_path(path)}".encode())
    fixed = {k: v for k, v in asdict(opts).items()
             if k not in ("model", "out", "work", "qnn_cache")}  # fmt: skip
    h.update(json.dumps(fixed, sort_keys=True, default=str).encode())
    h.update(f"{onnxruntime.__version__} {qnn_sdk_version()}".encode())
    return h.hexdigest()[:20]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached_build(
    model_dir: Path, root: Path, opts: BuildOptions
) -> tuple[Path, BuildReport | None]:
    """(bundle dir, the build's report, or None when the cache had it) for
    ``opts`` with its model, out and work dirs set under ``root/<key>``."""
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / "lock"):
        base = root / cache_key(model_dir, opts)
        bundle = base / "bundle"
        report = None
        if not (base / DONE).is_file():
            report = build(
                replace(opts, model=Path(model_dir), out=bundle, work=base / "work")
            )
            (base / DONE).write_text(report.tar.name + "\n")
        (base / DONE).touch()  # recently used, for pruning
        _prune(root, KEEP)
    return bundle, report


def _prune(root: Path, keep: int) -> None:
    """Drop all but the ``keep`` most recently used builds."""
    done = sorted(
        (p for p in root.iterdir() if (p / DONE).is_file()),
        key=lambda p: (p / DONE).stat().st_mtime,
        reverse=True,
    )
    for stale in done[keep:]:
        shutil.rmtree(stale, ignore_errors=True)
