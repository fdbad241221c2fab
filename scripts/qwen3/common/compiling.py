"""The compile steps the Qwen3 builds share: one ``compile <unit>`` step per
binary (a graph, or a group sharing weights on the board), keyed by the
compile code's hash, the ONNX files and the target (not by this module: like
the builds' step graphs it only wires the steps)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from scripts.common import weight_sharing
from scripts.common.onnx_data import model_files
from scripts.common.steps import Steps
from scripts.common.weight_sharing import Unit
from scripts.qwen3.common.workdir import WorkDir


def compile_steps(
    steps: Steps,
    ctx: WorkDir,
    sources: Mapping[str, Path],
    code: str,
    target: str,
    cache_dir: Path | None,
    gated: bool = False,
) -> dict[str, dict]:
    """Run ``compile <unit>`` for each binary of graph key -> ONNX ``sources``
    (a graph per binary; on a weight-sharing target one per group of graphs
    with the same weights, scripts/common/weight_sharing.py): each step's result
    (compile seconds, QNN SDK, binary bytes, its graphs), by unit name.
    ``gated``: also a binary per grouped graph (``bins/<key>.bin``), for the
    simulator gates (the simulator cannot load weight-shared binaries)."""
    units = weight_sharing.plan(sources, target)
    copies = [Unit(k, (k,)) for u in units if u.shared for k in u.keys]
    compiled = {}
    for unit in [*units, *(copies if gated else [])]:
        onnx = [model_files(sources[k]) for k in unit.keys]
        result = steps.run(
            f"compile {unit.name}",
            {"code": code, "onnx": onnx if unit.shared else onnx[0], "target": target},
            [ctx.bin_dir / f"{unit.name}.bin"],
            lambda unit=unit: weight_sharing.compile_unit(
                unit, sources, ctx.bin_dir, target, cache_dir
            ),
        )
        if unit in units:
            compiled[unit.name] = result
    return compiled
