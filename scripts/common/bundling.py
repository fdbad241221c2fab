"""Assemble voice bundles: copy graphs in, hash everything, write ``voice.yaml``.

Shared by every voice pipeline (GPT-SoVITS, Piper) so bundles look alike.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import qnnrt
from daemon.sdk.bundles.manifest import (
    Bundle,
    GraphSpec,
    sha256_file,
    tensor_spec,
    write_manifest,
)
from daemon.sdk.capabilities import Task
from scripts.common.onnx_data import external_files


def add_graph(
    root: Path, key: str, bin_path: Path, onnx_path: Path | None = None
) -> GraphSpec:
    """Copy ``bin_path`` (one graph) + its fp32 ONNX into ``root``; describe it
    from its metadata, naming the graph."""
    file = f"graphs/{key}.bin"
    info, sha = _copy_binary(root, file, bin_path)
    if len(info.graphs) != 1:
        raise ValueError(f"{bin_path}: {len(info.graphs)} graphs, expected exactly 1")
    return _spec(root, key, (file, sha), info.graphs[0], onnx_path)


def add_shared(
    root: Path,
    name: str,
    bin_path: Path,
    graphs: Mapping[str, str],
    onnx_paths: Mapping[str, Path] | None = None,
) -> dict[str, GraphSpec]:
    """Copy a binary holding several graphs into ``root`` as ``graphs/<name>.bin``
    (copied and hashed once); one entry per ``graphs`` item (key -> graph name
    in the binary), each with its fp32 ONNX from ``onnx_paths`` if given."""
    file = f"graphs/{name}.bin"
    info, sha = _copy_binary(root, file, bin_path)
    have = {g.name: g for g in info.graphs}
    missing = sorted(set(graphs.values()) - set(have))
    if missing:
        raise ValueError(f"{bin_path}: no graph(s) {missing}; it holds {list(have)}")
    onnx = onnx_paths or {}
    return {
        key: _spec(root, key, (file, sha), have[graph], onnx.get(key))
        for key, graph in graphs.items()
    }


def add_placed(
    root: Path,
    placed: Mapping[str, tuple[Path, str | None]],
    onnx_paths: Mapping[str, Path | None] | None = None,
) -> dict[str, GraphSpec]:
    """Entries for graph key -> (binary, graph name; None: its only graph), in
    ``placed`` order: a one-graph binary as :func:`add_graph`, a binary several
    keys name as :func:`add_shared` (copied and hashed once)."""
    onnx = {k: v for k, v in (onnx_paths or {}).items() if v is not None}
    by_binary: dict[Path, dict[str, str]] = {}
    for key, (path, graph) in placed.items():
        if graph is not None:
            by_binary.setdefault(path, {})[key] = graph
    specs: dict[str, GraphSpec] = {}
    for path, graphs in by_binary.items():
        specs |= add_shared(root, path.stem, path, graphs, onnx)
    return {
        key: specs[key] if key in specs else add_graph(root, key, path, onnx.get(key))
        for key, (path, graph) in placed.items()
    }


def _copy_binary(root: Path, file: str, bin_path: Path) -> tuple[qnnrt.BinaryInfo, str]:
    """Copy to ``root/file``: its metadata and sha256."""
    dest = root / file
    dest.parent.mkdir(parents=True, exist_ok=True)
    if bin_path.resolve() != dest.resolve():
        shutil.copyfile(bin_path, dest)
    return qnnrt.read_binary_info(dest), sha256_file(dest)


def _spec(
    root: Path,
    key: str,
    binary: tuple[str, str],
    g: qnnrt.GraphInfo,
    onnx_path: Path | None,
) -> GraphSpec:
    """Entry ``key``: graph ``g`` of ``binary`` (file, sha256) + optional ONNX."""
    onnx_rel = onnx_sha = None
    if onnx_path is not None:
        (root / "onnx").mkdir(exist_ok=True)
        onnx_dest = root / "onnx" / f"{key}.onnx"
        if onnx_path.resolve() != onnx_dest.resolve():
            shutil.copyfile(onnx_path, onnx_dest)
            # external data keeps its recorded name beside the graph
            for data in external_files(onnx_path):
                dest = onnx_dest.parent / data.relative_to(onnx_path.parent)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(data, dest)
        onnx_rel, onnx_sha = f"onnx/{key}.onnx", sha256_file(onnx_dest)
    return GraphSpec(
        key=key,
        file=binary[0],
        graph=g.name,
        sha256=binary[1],
        inputs=tuple(tensor_spec(t) for t in g.inputs),
        outputs=tuple(tensor_spec(t) for t in g.outputs),
        onnx=onnx_rel,
        onnx_sha256=onnx_sha,
    )


def hash_files(
    root: Path, dirs: tuple[str, ...] = ("cpu", "refs", "text")
) -> dict[str, str]:
    """sha256 of every file under the given bundle subdirectories, and of the
    ONNX graphs' external data (the graphs themselves are pinned by their
    entries)."""
    out = {}
    for d in dirs:
        for p in sorted((root / d).rglob("*")) if (root / d).is_dir() else []:
            if p.is_file():
                out[str(p.relative_to(root))] = sha256_file(p)
    graphs = sorted((root / "onnx").glob("*.onnx")) if (root / "onnx").is_dir() else []
    for graph in graphs:
        for data in external_files(graph):
            out.setdefault(str(data.relative_to(root)), sha256_file(data))
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
    task: Task = "tts",
    license: str | None = None,
) -> Bundle:
    """Write ``voice.yaml`` for everything now in ``root`` and return the bundle;
    ``license``: the id of the terms the build accepted (build/license.py)."""
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
        task=task,
        license=license,
    )
    write_manifest(bundle)
    return bundle


# A bundle is read by the daemon's own (systemd) user, not only by its builder.
BUNDLE_MODE: Final = 0o755
#: in a build's work dir: the bundle it made (so a rerun may replace it)
MADE: Final = "bundle.out"


def made_here(out: Path, work: Path) -> bool:
    """Whether ``out`` is the bundle the build in ``work`` wrote."""
    record = Path(work) / MADE
    return record.is_file() and record.read_text() == str(Path(out).resolve())


def write_staged(out: Path, work: Path, write: Callable[[Path], None]) -> None:
    """``write(staging)`` beside ``out``, then renamed into place: a failed
    build leaves no half-written bundle, and a rerun replaces only the bundle
    this work dir made (FileExistsError for any other ``out``)."""
    out, work = Path(out), Path(work)
    if out.exists() and not made_here(out, work):
        raise FileExistsError(f"{out} exists; choose a new directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.partial-"))
    try:
        write(staging)
        staging.chmod(BUNDLE_MODE)  # mkdtemp made it private to this user
        # recorded first: a bundle in place is always one a rerun may replace
        (work / MADE).write_text(str(out.resolve()))
        _replace(out, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _replace(out: Path, staging: Path) -> None:
    if not out.exists():
        staging.rename(out)
        return
    old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
    out.rename(old / out.name)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
