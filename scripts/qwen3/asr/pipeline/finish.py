"""The bundle step: graphs, tables and voice.yaml into the output directory,
verified as ``hexvoice bundle verify`` does, then packed as a .tar.

Layout (daemon/engines/qwen3asr/params.py names the files)::

    voice.yaml              engine qwen3-asr, task asr, sample_rate 16000
    graphs/<key>.bin        one graph per binary (weight sharing: issue 15)
    onnx/<key>.onnx         the fp32 graphs, for the CPU backend (--no-onnx: none)
    cpu/embed_tokens.npy    token embeddings [V, H]
    text/tokenizer.json     the checkpoint's tokenizer
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Final

from daemon.engine.bundles.manifest import pack
from daemon.engine.bundles.verify import verify_bundle
from daemon.engines.qwen3asr import params as layout
from daemon.engines.qwen3asr.prompt import language_code
from scripts.common import bundling
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.source import SAMPLE_RATE

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
    """Write the bundle at ``out`` (replacing it) and ``tar``, with the fp32
    graphs unless not ``with_onnx``: (the problems ``verify_bundle`` finds,
    empty when sound; the number of files)."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(ctx.stage, out)
    graphs = {
        key: bundling.add_graph(
            out, key, ctx.bin_path(key), ctx.onnx(key) if with_onnx else None
        )
        for key in ctx.graph_keys()
    }
    tables = results["tables"]
    sdks = {c["qnn_sdk"] for c in results["compile"].values()}
    bundle = bundling.finish(
        out,
        engine=layout.ENGINE_ID,
        name=name,
        sample_rate=SAMPLE_RATE,
        # the codes clients see (the engine's capabilities), e.g. "en", "zh"
        languages=tuple(language_code(n) for n in tables["params"]["languages"]),
        graphs=graphs,
        params=tables["params"],
        qnn_sdk=",".join(sorted(sdks)),
        target=target,
        task=TASK,
    )
    problems = verify_bundle(bundle)
    if not problems:
        pack(out, tar)
    return problems, len(bundle.files) + len(graphs) * (2 if with_onnx else 1)
