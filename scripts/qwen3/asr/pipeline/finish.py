"""The bundle step: graphs, tables and voice.yaml into the output directory,
verified as ``hexvoice bundle verify`` does, then packed as a .tar (shared with
the other Qwen3 builds: scripts/qwen3/common/bundle.py).

Layout (daemon/engines/qwen3/asr/params.py names the files)::

    voice.yaml              engine qwen3-asr, task asr, sample_rate 16000
    graphs/<key>.bin        one graph per binary (the simulator refuses shared weights)
    onnx/<key>.onnx         the fp32 graphs, for the CPU backend (--no-onnx: none)
    cpu/embed_tokens.npy    token embeddings [V, H]
    text/tokenizer.json     the checkpoint's tokenizer
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from daemon.engines.qwen3.asr import params as layout
from daemon.engines.qwen3.asr.prompt import language_code
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.source import SAMPLE_RATE
from scripts.qwen3.common import bundle

TASK: Final = "asr"


def write_bundle(
    ctx: BuildContext,
    out: Path,
    tar: Path,
    name: str,
    target: str,
    results: dict[str, Any],
    with_onnx: bool = True,
) -> tuple[list[str], int]:
    """Every graph's bundle as engine qwen3-asr, task asr, its language codes
    (pipeline_common/bundle.py): (the problems verify finds; the file count)."""
    params = results["tables"]["params"]
    return bundle.write_bundle(
        ctx, ctx.graph_keys(), out, tar, results, with_onnx,
        engine=layout.ENGINE_ID,
        name=name,
        sample_rate=SAMPLE_RATE,
        # the codes clients see (the engine's capabilities), e.g. "en", "zh"
        languages=tuple(language_code(n) for n in params["languages"]),
        target=target,
        task=TASK,
    )  # fmt: skip
