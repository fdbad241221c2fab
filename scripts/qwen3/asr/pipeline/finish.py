"""The bundle stage: graphs, tables and voice.yaml into the output directory,
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

from typing import Final

from daemon.engines.qwen3.asr import params as layout
from daemon.engines.qwen3.asr.prompt import language_code
from scripts.common.build.compile import compiled
from scripts.common.build.stage import Results
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.source import SAMPLE_RATE
from scripts.qwen3.asr.pipeline.tables import Tables
from scripts.qwen3.common import bundle
from scripts.qwen3.common.bundle import Bundled, Manifest

TASK: Final = "asr"


def run(ctx: BuildContext, results: Results) -> Bundled:
    """Every graph's bundle as engine qwen3-asr, task asr, its language codes."""
    tables: Tables = results["tables"]
    manifest = Manifest(
        engine=layout.ENGINE_ID,
        task=TASK,
        sample_rate=SAMPLE_RATE,
        # the codes clients see (the engine's capabilities), e.g. "en", "zh"
        languages=tuple(language_code(n) for n in tables.params["languages"]),
        params=tables.params,
    )
    return bundle.write(ctx, compiled(results["compile"]), manifest)
