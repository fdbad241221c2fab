"""Broken copies of real bundles: a manifest edit, a binary for another HTP.

Copies link every file back to the original (bundles are tens to hundreds of
MB) except ``voice.yaml``; :func:`swap_binary` replaces a link, never writes
through it, so the cached originals are never touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from daemon.sdk.bundles.manifest import MANIFEST, sha256_file
from scripts.common import qnn_compile

#: SM8650 (Snapdragon 8 Gen 3): HTP v75, Qnn_SocModel_t 57 (QNN SDK SoC table).
#: Not a bundle target: a binary this project never ships, compiled for real.
FOREIGN_TARGET: Final = "sm8650"
FOREIGN_HTP: Final = {"htp_arch": "75", "soc_model": "57"}


def linked_copy(src: Path, dest: Path) -> Path:
    """``dest`` with a private ``voice.yaml`` and a symlink for every other file."""
    for p in sorted(src.rglob("*")):
        if not p.is_file():
            continue
        out = dest / p.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        if p.name == MANIFEST and p.parent == src:
            shutil.copyfile(p, out)
        else:
            out.symlink_to(p.resolve())
    return dest


def edit_manifest(root: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    m = yaml.safe_load((root / MANIFEST).read_text())
    edit(m)
    (root / MANIFEST).write_text(yaml.safe_dump(m, sort_keys=False))


def swap_binary(root: Path, key: str, binary: Path) -> None:
    """Put ``binary`` in place of graph ``key``'s file, its sha256 updated."""
    m = yaml.safe_load((root / MANIFEST).read_text())
    dest = root / m["graphs"][key]["file"]
    dest.unlink()  # a link into the cache: replace it, never write through it
    shutil.copyfile(binary, dest)
    m["graphs"][key]["sha256"] = sha256_file(dest)
    (root / MANIFEST).write_text(yaml.safe_dump(m, sort_keys=False))


def compile_foreign(onnx_path: Path, out_dir: Path, cache_dir: Path) -> Path:
    """``onnx_path`` compiled for HTP v75 / SoC 57 (cached by content like every
    test compile: the options are part of the cache key)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(qnn_compile.TARGETS, FOREIGN_TARGET, FOREIGN_HTP)
        done = qnn_compile.compile_onnx(
            onnx_path, out_dir, target=FOREIGN_TARGET, cache_dir=cache_dir
        )
    return done.bin_path
