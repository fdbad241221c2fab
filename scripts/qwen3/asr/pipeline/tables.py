"""The tables stage: cpu/embed_tokens.npy and text/tokenizer.json (the
tokenizer upstream runs: the fast tokenizer as loaded, added tokens
included), and the bundle's params, which need the loaded processor."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from daemon.engines.qwen3.asr import params as layout
from scripts.common.build.stage import Results
from scripts.qwen3.asr.pipeline.context import BuildContext
from scripts.qwen3.asr.pipeline.params import params
from scripts.qwen3.asr.pipeline.source import GENERATION

_LOGGER = logging.getLogger(__name__)

#: The CPU keeps embed_tokens; at full size (151,936 x 1024) float16 halves its
#: 622 MB (docs/qwen3.md, CPU side).  A table this small or smaller stays float32, so a
#: tiny test checkpoint runs the CPU backend bit-exact against upstream's fp32.
EMBED_FP32_MAX_BYTES: Final = 64 << 20


@dataclass(frozen=True)
class Tables:
    """The embedding table's dtype and shape, the bundle's params, and whether
    the checkpoint asks for sampling (the engine decodes greedily)."""

    embed_dtype: str
    embed_shape: tuple[int, ...]
    params: dict[str, Any]
    do_sample: bool


def run(ctx: BuildContext, results: Results) -> Tables:
    weight = ctx.model.thinker.model.embed_tokens.weight.detach().float().numpy()
    dtype = np.float32 if weight.nbytes <= EMBED_FP32_MAX_BYTES else np.float16
    table = ctx.stage / layout.EMBED_TOKENS
    table.parent.mkdir(parents=True, exist_ok=True)
    np.save(table, weight.astype(dtype))
    tok = ctx.stage / layout.TOKENIZER
    tok.parent.mkdir(parents=True, exist_ok=True)
    ctx.asr.processor.tokenizer.backend_tokenizer.save(str(tok))
    if ctx.src.generation.do_sample:
        _LOGGER.warning(
            "%s says do_sample: upstream's transformers path would sample; the "
            "engine decodes greedily unless a request asks for sampling (as "
            "upstream's vLLM backend, temperature 0)",
            GENERATION,
        )
    return Tables(
        np.dtype(dtype).name, weight.shape, params(ctx), ctx.src.generation.do_sample
    )
