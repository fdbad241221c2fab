"""The compile steps the Qwen3 builds share: one ``compile <key>`` step per
graph, keyed by the compile code's hash, the ONNX files and the target (not by
this module: like the builds' step graphs it only wires the steps)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from scripts.common.onnx_data import model_files
from scripts.common.qnn_compile import compile_onnx
from scripts.common.steps import Steps
from scripts.qwen3.pipeline_common.workdir import WorkDir


def compile_steps(
    steps: Steps,
    ctx: WorkDir,
    sources: Mapping[str, Path],
    code: str,
    target: str,
    cache_dir: Path | None,
) -> dict[str, dict]:
    """Run ``compile <key>`` for each graph key -> ONNX of ``sources``: each
    step's result (compile seconds, QNN SDK, binary bytes), by key."""
    compiled = {}
    for key, source in sources.items():
        compiled[key] = steps.run(
            f"compile {key}",
            {"code": code, "onnx": model_files(source), "target": target},
            [ctx.bin_path(key)],
            lambda key=key, source=source: compile_graph(
                ctx, key, source, target, cache_dir
            ),
        )
    return compiled


def compile_graph(
    ctx: WorkDir, key: str, source: Path, target: str, cache_dir: Path | None
) -> dict:
    """``source`` compiled into ``bins/<key>.bin``: the compile step's result."""
    result = compile_onnx(
        source, ctx.bin_dir, name=key, target=target, cache_dir=cache_dir
    )
    return {
        "compile_seconds": result.seconds,
        "qnn_sdk": result.qnn_sdk_version,
        "bytes": result.bin_path.stat().st_size,
    }
