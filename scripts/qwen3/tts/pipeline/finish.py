"""The bundle step: graphs, tables and voice.yaml into the output directory,
verified as ``hexvoice bundle verify`` does, then packed as a .tar.

Layout (daemon/engines/qwen3tts/params.py names the files)::

    voice.yaml                 engine qwen3-tts, task tts, sample_rate 24000
    graphs/<key>.bin           one graph per binary (weight sharing: issue 15)
    onnx/<key>.onnx            the fp32 graphs, for the CPU backend (--no-onnx: none)
    cpu/text_embedding.npy     [Vt, Dt]
    cpu/codec_embedding.npy    [V, Ht] (the talker's)
    cpu/cp_embedding.npy       [15, Vc, Ht] (the code predictor's input tables)
    cpu/mel_basis.npy          [128, 513] (Base: the x-vector mel)
    text/tokenizer.json        the checkpoint's tokenizer (converted at build time)
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Final

from daemon.engine.bundles.manifest import pack
from daemon.engine.bundles.verify import verify_bundle
from daemon.engines.qwen3tts import params as layout
from daemon.text.languages import code_of
from scripts.common import bundling
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.source import SAMPLE_RATE

TASK: Final = "tts"


def languages(params: dict[str, Any]) -> tuple[str, ...]:
    """The manifest's languages: the advertised ones as codes ("zh", "en";
    a name without a code stays a name), as the engine reports them."""
    p = layout.TtsParams.from_mapping(params)
    return tuple(code_of(n) or n for n in p.advertised_languages[1:])


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
    params = results["tables"]["params"]
    sdks = {c["qnn_sdk"] for c in results["compile"].values()}
    bundle = bundling.finish(
        out,
        engine=layout.ENGINE_ID,
        name=name,
        sample_rate=SAMPLE_RATE,
        languages=languages(params),
        graphs=graphs,
        params=params,
        qnn_sdk=",".join(sorted(sdks)),
        target=target,
        task=TASK,
    )
    problems = verify_bundle(bundle)
    if not problems:
        pack(out, tar)
    return problems, len(bundle.files) + len(graphs) * (2 if with_onnx else 1)
