"""Content-keyed cache of built bundles (tests, demos, benchmarks), shared by
the Qwen3 builds (scripts/qwen3/{asr,tts}/pipeline/cache.py give the key and
the build).

``cached_build(root, key, build)`` runs ``build(out, work)`` once per key and
returns ``root/<key>/bundle``; ``cached_options_build`` does so for a build's
options.  A key covers everything that can change the bundle: the model files,
the pipeline's code, the options (``key_options``), and the onnxruntime / QNN
versions (``content_key``).  Layout of ``root/<key>/``::

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Final, TypeVar

from scripts.common.qnn_compile import qnn_sdk_version
from scripts.common.steps import BuildReport, hash_path

DONE: Final = "DONE"
#: keys kept under one root: enough for the option sets one test run uses
KEEP: Final = 3
#: the options that only say where things are (the key holds their contents)
PATH_OPTIONS: Final = ("model", "codec", "out", "work", "qnn_cache")
R = TypeVar("R", bound=BuildReport)
Opts = TypeVar("Opts")


def content_key(code: str, files: Iterable[Path], options: Mapping[str, Any]) -> str:
    """Hash of the code hash, the files (by name and content), the options and
    the onnxruntime / QNN versions."""
    import onnxruntime

    h = hashlib.sha256(code.encode())
    for path in files:
        h.update(f"{path.name}={hash_path(path)}".encode())
    h.update(json.dumps(dict(options), sort_keys=True, default=str).encode())
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
    root: Path, key: str, build: Callable[[Path, Path], R]
) -> tuple[Path, R | None]:
    """(bundle dir, the build's report, or None when the cache had it): the
    bundle ``build(out, work)`` writes under ``root/key``."""
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / "lock"):
        base = root / key
        bundle = base / "bundle"
        report = None
        if not (base / DONE).is_file():
            report = build(bundle, base / "work")
            (base / DONE).write_text(report.tar.name + "\n")
        (base / DONE).touch()  # recently used, for pruning
        _prune(root, KEEP)
    return bundle, report


def key_options(opts: Any) -> dict[str, Any]:
    """A build's options (a dataclass) without the ones that name paths."""
    return {k: v for k, v in asdict(opts).items() if k not in PATH_OPTIONS}


def cached_options_build(
    root: Path, key: str, model_dir: Path, opts: Opts, build: Callable[[Opts], R]
) -> tuple[Path, R | None]:
    """``cached_build`` of ``build(opts)`` with its model, out and work dirs set
    (the model to ``model_dir``, the others under ``root/key``)."""
    return cached_build(
        root,
        key,
        lambda out, work: build(
            replace(opts, model=Path(model_dir), out=out, work=work)
        ),
    )


def _prune(root: Path, keep: int) -> None:
    """Drop all but the ``keep`` most recently used builds."""
    done = sorted(
        (p for p in root.iterdir() if (p / DONE).is_file()),
        key=lambda p: (p / DONE).stat().st_mtime,
        reverse=True,
    )
    for stale in done[keep:]:
        shutil.rmtree(stale, ignore_errors=True)
