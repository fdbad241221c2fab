"""The bundle stage: graphs, tables and voice.yaml into the output directory,
verified as ``hexvoice bundle verify`` does, then packed as a .tar (shared with
the other Qwen3 builds: scripts/qwen3/common/bundle.py).

Layout (daemon/engines/qwen3/tts/params.py names the files)::

    voice.yaml                 engine qwen3-tts, task tts, sample_rate 24000
    graphs/<key>.bin           one graph per binary (simulator: no shared weights)
    onnx/<key>.onnx            the fp32 graphs, for the CPU backend (--no-onnx: none)
    cpu/text_embedding.npy     [Vt, Dt]
    cpu/codec_embedding.npy    [V, Ht] (the talker's)
    cpu/cp_embedding.npy       [15, Vc, Ht] (the code predictor's input tables)
    cpu/mel_basis.npy          [128, 513] (Base: the x-vector mel)
    text/tokenizer.json        the checkpoint's tokenizer (converted at build time)
"""

from __future__ import annotations

from typing import Any, Final

from daemon.engines.qwen3.tts import params as layout
from daemon.text.languages import code_of
from scripts.common.build.compile import compiled
from scripts.common.build.stage import Results
from scripts.qwen3.common import bundle
from scripts.qwen3.common.bundle import Bundled, Manifest
from scripts.qwen3.tts.pipeline.context import BuildContext
from scripts.qwen3.tts.pipeline.source import SAMPLE_RATE

TASK: Final = "tts"


def languages(params: dict[str, Any]) -> tuple[str, ...]:
    """The manifest's languages: the advertised ones as codes ("zh", "en";
    a name without a code stays a name), as the engine reports them."""
    p = layout.TtsParams.from_mapping(params)
    return tuple(code_of(n) or n for n in p.advertised_languages[1:])


def run(ctx: BuildContext, results: Results) -> Bundled:
    """Every graph's bundle as engine qwen3-tts, task tts, the advertised
    languages, the tables stage's params (stages/tables.py Tables)."""
    params = results["tables"].params
    manifest = Manifest(
        engine=layout.ENGINE_ID,
        task=TASK,
        sample_rate=SAMPLE_RATE,
        languages=languages(params),
        params=params,
    )
    return bundle.write(ctx, compiled(results["compile"]), manifest)
