"""The one content-keyed cache of built bundles (tests, the demo, benchmarks).

``cached_build(root, key, build)`` runs ``build(out, work)`` once per key and
returns ``root/<key>/bundle``.  ``content_key`` makes a key of everything
that can change a bundle: the build's code (every repository module its
declaration can run, :mod:`code`), the model files by content, the options
and the onnxruntime / QNN versions.  Layout of ``root/<key>/``::

    bundle/      the bundle (voice.yaml, graphs/, onnx/, cpu/, text/)
    bundle.tar   the same, packed (builds that pack one)
    work/        the build's work dir (state.json, onnx, binaries)
    DONE         written last: the build finished and verified

One builder per root at a time (an flock on ``root/lock``); the others wait
and then find it done, so concurrent test sessions share one build.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final, TypeVar

from scripts.common.build.code import code_key
from scripts.common.build.run import hash_path

DONE: Final = "DONE"
#: keys kept under one root: enough for the option sets one test run uses
KEEP: Final = 3
#: a build used this recently is never pruned: another process (a second test
#: run in the same checkout, a service) may still be reading it, and a session
#: fixture touches DONE only when it starts (a whole suite takes ~30 min under load)
IN_USE_SECONDS: Final = 2 * 3600
#: the options that only say where things are (the key holds their contents)
PATH_OPTIONS: Final = ("model", "codec", "voice", "out", "work", "qnn_cache")
R = TypeVar("R")


def toolchain() -> str:
    """The onnxruntime and QNN SDK versions (both change compiled binaries)."""
    import onnxruntime

    from scripts.common.qnn_compile import qnn_sdk_version

    return f"{onnxruntime.__version__} {qnn_sdk_version()}"


def content_key(
    modules: Iterable[str], files: Iterable[Path], options: Mapping[str, Any]
) -> str:
    """Hash of the code of ``modules``, the files (name and content), the
    options and the toolchain."""
    h = hashlib.sha256(code_key(modules).encode())
    for path in files:
        h.update(f"{Path(path).name}={hash_path(Path(path))}".encode())
    h.update(json.dumps(dict(options), sort_keys=True, default=str).encode())
    h.update(toolchain().encode())
    return h.hexdigest()[:20]


def key_options(opts: Any) -> dict[str, Any]:
    """A build's options (a dataclass) without the ones that name paths."""
    return {k: v for k, v in asdict(opts).items() if k not in PATH_OPTIONS}


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive flock on ``path`` (created if missing) while inside."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached_build(
    root: Path, key: str, build: Callable[[Path, Path], R], keep: int = KEEP
) -> tuple[Path, R | None]:
    """(bundle dir, the build's report, or None when the cache had it): the
    bundle ``build(out, work)`` writes under ``root/key``."""
    root.mkdir(parents=True, exist_ok=True)
    with locked(root / "lock"):
        base = root / key
        bundle = base / "bundle"
        report = None
        if not (base / DONE).is_file():
            report = build(bundle, base / "work")
            (base / DONE).write_text(key + "\n")
        (base / DONE).touch()  # recently used, for pruning
        _prune(root, keep)
    return bundle, report


def _prune(root: Path, keep: int) -> None:
    """Drop all but the ``keep`` most recently used builds, sparing any used in
    the last IN_USE_SECONDS."""
    now = time.time()
    done = sorted(
        (p for p in root.iterdir() if (p / DONE).is_file()),
        key=lambda p: (p / DONE).stat().st_mtime,
        reverse=True,
    )
    for stale in done[keep:]:
        if now - (stale / DONE).stat().st_mtime >= IN_USE_SECONDS:
            shutil.rmtree(stale, ignore_errors=True)
