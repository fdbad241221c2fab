"""Which graphs of a build go into one context binary with one weight copy.

A target whose profile says ``htp.share_weights`` (the board, qcs8550) gets one
binary per group of graphs holding the same weights: the KV buckets of a decoder,
the length buckets of an encoder, prefill + decode.  ``compile_shared`` stores
the weights such graphs have in common once.  A target that cannot load such
binaries (the x86 simulator answers QNN 1000) keeps one binary per graph.  Both
are planned here from the same ONNX graphs, so every pipeline's compile step
asks :func:`plan` and compiles each :class:`Unit` with :func:`compile_unit`.

Groups are found from the graphs themselves: two graphs belong together when
most of their weight bytes are equal initializers (same bytes, whatever their
names or the graphs' static shapes).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from daemon.targets.profile import load_profile
from scripts.common.qnn_compile import compile_onnx, qnn_sdk_version
from scripts.common.qnn_shared import compile_shared

#: Two graphs share a binary when the weights they have in common are at least
#: this fraction of the smaller graph's weights (buckets of one model: ~1.0;
#: graphs of different models: ~0).
SHARED_FRACTION: Final = 0.5
#: Initializers smaller than this are shape constants, scales and masks, not
#: weights: they neither make nor break a group.
MIN_WEIGHT_BYTES: Final = 4096
#: a shared binary is ``<SHARED_PREFIX><first key>.bin``
SHARED_PREFIX: Final = "shared_"


@dataclass(frozen=True)
class Unit:
    """One context binary to compile: ``bins/<name>.bin`` holding ``keys``."""

    name: str
    keys: tuple[str, ...]

    @property
    def shared(self) -> bool:
        return len(self.keys) > 1


def shares_weights(target: str) -> bool:
    """The target profile's ``htp.share_weights``."""
    return load_profile(target).htp.share_weights


def plan(sources: Mapping[str, Path], target: str) -> tuple[Unit, ...]:
    """The binaries to build for graph key -> ONNX ``sources`` on ``target``:
    a binary per graph, or (weight-sharing target) per group of graphs with the
    same weights.  Units are in the order of their first key."""
    if not shares_weights(target):
        return tuple(Unit(key, (key,)) for key in sources)
    return tuple(
        Unit(f"{SHARED_PREFIX}{keys[0]}" if len(keys) > 1 else keys[0], keys)
        for keys in weight_groups(sources)
    )


def weight_groups(sources: Mapping[str, Path]) -> list[tuple[str, ...]]:
    """Graph keys grouped by shared weights (each key once, in ``sources``
    order; a graph sharing nothing is a group of one)."""
    keys = list(sources)
    weights = {key: _weights(sources[key]) for key in keys}
    parent = {key: key for key in keys}

    def root(key: str) -> str:
        while parent[key] != key:
            key = parent[key]
        return key

    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if _same_model(weights[a], weights[b]):
                parent[root(b)] = root(a)
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(root(key), []).append(key)
    return [tuple(g) for g in groups.values()]


def compile_unit(
    unit: Unit,
    sources: Mapping[str, Path],
    out_dir: Path,
    target: str,
    cache_dir: Path | None,
) -> dict[str, Any]:
    """``unit`` compiled into ``out_dir/<unit.name>.bin``: the compile step's
    result (seconds, QNN SDK, bytes, and key -> graph name in the binary)."""
    if unit.shared:
        shared = compile_shared(
            [sources[k] for k in unit.keys],
            out_dir,
            name=unit.name,
            target=target,
            cache_dir=cache_dir,
        )
        path, graphs = shared.bin_path, dict(zip(unit.keys, shared.graphs, strict=True))
        seconds = None  # a cache hit has no compile time; the step times itself
    else:
        (key,) = unit.keys
        done = compile_onnx(
            sources[key], out_dir, name=unit.name, target=target, cache_dir=cache_dir
        )
        path, graphs, seconds = done.bin_path, {key: None}, done.seconds
    return {
        "compile_seconds": seconds,
        "qnn_sdk": qnn_sdk_version(),
        "bytes": path.stat().st_size,
        "graphs": graphs,
    }


def placements(
    results: Mapping[str, Mapping[str, Any]], bin_dir: Path
) -> dict[str, tuple[Path, str | None]]:
    """Graph key -> (its binary, its graph name there; None: the binary's only
    graph), from the :func:`compile_unit` results by unit name (a result
    without ``graphs``, from before units, is the one graph of its name)."""
    out = {}
    for name, result in results.items():
        for key, graph in (result.get("graphs") or {name: None}).items():
            out[key] = (bin_dir / f"{name}.bin", graph)
    return out


def _same_model(a: dict[str, int], b: dict[str, int]) -> bool:
    smaller = min(sum(a.values()), sum(b.values()))
    common = sum(n for digest, n in a.items() if digest in b)
    return smaller > 0 and common >= SHARED_FRACTION * smaller


def _weights(path: Path) -> dict[str, int]:
    """sha256 -> bytes of every weight-sized initializer (and Constant) of the
    graph at ``path`` (external data read from beside it)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    tensors = list(model.graph.initializer)
    tensors += [
        a.t
        for n in model.graph.node
        if n.op_type == "Constant"
        for a in n.attribute
        if a.name == "value"
    ]
    out = {}
    for t in tensors:
        data = numpy_helper.to_array(t)
        if data.nbytes >= MIN_WEIGHT_BYTES:
            h = hashlib.sha256(str(data.dtype).encode())
            h.update(data.tobytes())
            out[h.hexdigest()] = data.nbytes
    return out
