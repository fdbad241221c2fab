"""What an engine needs of a bundle's graphs, and the check that they have it.

An engine declares every graph it runs with the tensors and shapes it uses
(``Engine.requirements``).  The same check runs on the manifest's ``GraphSpec``s
(``sdk.verify``, before anything loads) and on the loaded ``Runner``s (the
engine's ``load``): both have ``key``, ``inputs`` and ``outputs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from daemon.sdk.bundles.manifest import BundleError

#: tensor name -> the shape the engine feeds or reads (None: any shape)
TensorNeeds = Mapping[str, tuple[int, ...] | None]
#: graph key -> its tensors: every graph an engine runs (``Engine.requirements``)
GraphNeeds = Mapping[str, TensorNeeds]


def expect(runner: Any, tensors: TensorNeeds) -> dict[str, np.dtype]:
    """Dtypes of the named inputs/outputs; at load, a BundleError naming graph and
    tensor unless each exists with the shape the engine uses (None: any shape)."""
    have = {t.name: t for t in (*runner.inputs, *runner.outputs)}
    out = {}
    for name, shape in tensors.items():
        t = have.get(name)
        if t is None:
            raise BundleError(f"graph {runner.key}: no tensor {name!r}; it has "
                              f"{sorted(have)}")  # fmt: skip
        # -1: a dimension the graph takes at any size (the CPU backend's ONNX
        # of an engine that runs it at the real length, e.g. piper-vits).
        if shape is not None and not _fits(tuple(t.shape), tuple(shape)):
            raise BundleError(
                f"graph {runner.key}: {name!r} is {list(t.shape)}, the engine "
                f"uses {list(shape)}"
            )
        out[name] = np.dtype(t.dtype)
    return out


def _fits(have: tuple[int, ...], want: tuple[int, ...]) -> bool:
    return len(have) == len(want) and all(h in (w, -1) for h, w in zip(have, want))


def unmet(needs: GraphNeeds, graphs: Mapping[str, Any]) -> list[str]:
    """What ``graphs`` lack of ``needs``: missing graphs, then each graph's first
    missing or mis-shaped tensor.  ``graphs`` are runners (``load``) or the
    manifest's ``GraphSpec``s (``verify_bundle``): both have key/inputs/outputs."""
    missing = [key for key in needs if key not in graphs]
    problems = [f"graph {key!r} is missing (the engine runs it)" for key in missing]
    for key, tensors in needs.items():
        if key in graphs:
            try:
                expect(graphs[key], tensors)
            except BundleError as exc:
                problems.append(str(exc))
    return problems


def require(needs: GraphNeeds, graphs: Mapping[str, Any]) -> None:
    """At load: a BundleError naming every unmet need (see :func:`unmet`)."""
    problems = unmet(needs, graphs)
    if problems:
        raise BundleError("; ".join(problems))
