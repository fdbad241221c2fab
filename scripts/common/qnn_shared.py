"""Several ONNX graphs compiled into ONE context binary that stores their
common weights once (the QNN EP's ``ep.share_ep_contexts``): what a
weight-sharing target gets for graphs that differ only in static shape
(scripts/common/weight_sharing.py plans which)."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qnnrt import native_stdout
from scripts.common.qnn_compile import (
    COMMON_OPTIONS,
    TARGETS,
    CompileError,
    onnx_cache_key,
    register_devices,
    session_options,
)


@dataclass(frozen=True)
class Shared:
    """One context binary holding several graphs (``compile_shared``)."""

    bin_path: Path
    #: the binary's graph names, in the order of the ONNX graphs they came from
    graphs: tuple[str, ...]


def compile_shared(
    onnx_paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    name: str,
    target: str = "simulator",
    cache_dir: str | Path | None = None,
) -> Shared:
    """Compile several ONNX graphs into ONE context binary with one graph each
    (the QNN EP's ``ep.share_ep_contexts``): ``out_dir/<name>.bin`` and its
    graph names, one per ONNX graph in order (each EPContext node's
    ``partition_name`` is the graph's name in the binary).  Initializers equal
    across the graphs are stored once (the binary's shared-weights section), so
    graphs that differ only in static shape cost one weight copy.
    ``cache_dir``: content-keyed cache, as for :func:`compile_onnx`."""
    if target not in TARGETS:
        raise ValueError(f"target {target!r}: expected one of {sorted(TARGETS)}")
    paths = [Path(p) for p in onnx_paths]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / f"{name}.bin"
    hit = None
    if cache_dir is not None:
        key = hashlib.sha256(
            json.dumps(["shared", *(onnx_cache_key(p, target) for p in paths)]).encode()
        ).hexdigest()[:32]
        hit = Path(cache_dir) / key
        if (hit / "meta.json").is_file():
            shutil.copyfile(hit / "model.bin", dest)
            return Shared(dest, tuple(json.loads((hit / "meta.json").read_text())))
    with tempfile.TemporaryDirectory(prefix="qnn_shared_") as tmp:
        graphs = _share_into(paths, Path(tmp), target)
        if hit is not None:
            staged = hit.with_name(f".{hit.name}.tmp")
            shutil.rmtree(staged, ignore_errors=True)
            staged.mkdir(parents=True)
            shutil.copyfile(Path(tmp) / "model.bin", staged / "model.bin")
            (staged / "meta.json").write_text(json.dumps(graphs))
            shutil.rmtree(hit, ignore_errors=True)
            staged.rename(hit)  # atomic publish, as compile_onnx
        shutil.copyfile(Path(tmp) / "model.bin", dest)
    return Shared(dest, tuple(graphs))


def _share_into(paths: Sequence[Path], work: Path, target: str) -> list[str]:
    """Compile ``paths`` into ``work/model.bin``: the graph names, in order."""
    import onnx
    import onnxruntime as ort

    devices = register_devices(ort)[:1]
    graphs = []
    for i, path in enumerate(paths):
        ctx = work / f"g{i}.ctx.onnx"
        so = session_options(ort)
        so.add_session_config_entry("ep.context_enable", "1")
        so.add_session_config_entry("ep.context_embed_mode", "0")
        so.add_session_config_entry("ep.context_file_path", str(ctx))
        so.add_session_config_entry("ep.share_ep_contexts", "1")
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        if i == len(paths) - 1:
            so.add_session_config_entry("ep.stop_share_ep_contexts", "1")
        so.add_provider_for_devices(devices, {**COMMON_OPTIONS, **TARGETS[target]})
        try:
            with native_stdout():
                ort.InferenceSession(str(path), so)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise CompileError(f"QNN EP could not compile {path}: {exc}") from exc
        graphs.append(_partition_name(onnx.load(str(ctx), load_external_data=False)))
    bins = list(work.glob("*.bin"))
    if len(bins) != 1:
        raise CompileError(f"expected one shared .bin, found {bins}")
    if len(set(graphs)) != len(graphs):
        raise CompileError(f"graphs of one binary share a name: {graphs}")
    bins[0].rename(work / "model.bin")
    return graphs


def _partition_name(model: Any) -> str:
    (node,) = [n for n in model.graph.node if n.op_type == "EPContext"]
    for attr in node.attribute:
        if attr.name == "partition_name":
            return attr.s.decode()
    raise CompileError("EPContext node without partition_name")
