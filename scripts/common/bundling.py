"""Assemble voice bundles: copy graphs in, hash everything, write ``voice.yaml``.

Shared by every voice pipeline (GPT-SoVITS, Piper) so bundles look alike.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import qnnrt
from daemon.engine.bundle import (
    Bundle,
    GraphSpec,
    sha256_file,
    tensor_spec,
    write_manifest,
)


def add_graph(
    root: Path, key: str, bin_path: Path, onnx_path: Path | None = None
) -> GraphSpec:
    """Copy ``bin_path`` (+ fp32 ONNX) into ``root``; describe it from its metadata."""
    (root / "graphs").mkdir(parents=True, exist_ok=True)
    dest = root / "graphs" / f"{key}.bin"
    if bin_path.resolve() != dest.resolve():
        shutil.copyfile(bin_path, dest)
    info = qnnrt.read_binary_info(dest)
    if len(info.graphs) != 1:
        raise ValueError(f"{bin_path}: {len(info.graphs)} graphs, expected exactly 1")
    (g,) = info.graphs
    onnx_rel = onnx_sha = None
    if onnx_path is not None:
        (root / "onnx").mkdir(exist_ok=True)
        onnx_dest = root / "onnx" / f"{key}.onnx"
        if onnx_path.resolve() != onnx_dest.resolve():
            shutil.copyfile(onnx_path, onnx_dest)
        onnx_rel, onnx_sha = f"onnx/{key}.onnx", sha256_file(onnx_dest)
    return GraphSpec(
        key=key,
        file=f"graphs/{key}.bin",
        sha256=sha256_file(dest),
        inputs=tuple(tensor_spec(t) for t in g.inputs),
        outputs=tuple(tensor_spec(t) for t in g.outputs),
        onnx=onnx_rel,
        onnx_sha256=onnx_sha,
    )


def hash_files(
    root: Path, dirs: tuple[str, ...] = ("cpu", "refs", "text")
) -> dict[str, str]:
    """sha256 of every file under the given bundle subdirectories."""
    out = {}
    for d in dirs:
        for p in sorted((root / d).rglob("*")) if (root / d).is_dir() else []:
            if p.is_file():
                out[str(p.relative_to(root))] = sha256_file(p)
    return out


def finish(
    root: Path,
    *,
    engine: str,
    name: str,
    sample_rate: int,
    languages: tuple[str, ...],
    graphs: Mapping[str, GraphSpec],
    params: Mapping[str, Any] | None = None,
    voices: Mapping[str, Mapping[str, Any]] | None = None,
    qnn_sdk: str | None = None,
    target: str | None = None,
) -> Bundle:
    """Write ``voice.yaml`` for everything now in ``root`` and return the bundle."""
    bundle = Bundle(
        root=root,
        engine=engine,
        name=name,
        sample_rate=sample_rate,
        languages=languages,
        graphs=dict(graphs),
        files=hash_files(root),
        params=dict(params or {}),
        voices={k: dict(v) for k, v in (voices or {}).items()},
        qnn_sdk=qnn_sdk,
        target=target,
    )
    write_manifest(bundle)
    return bundle
