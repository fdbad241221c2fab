"""The T2S driver the GPT-SoVITS gates run: the engine's own driver
(daemon/engines/gptsovits/t2s.py) with the SDK's KV caches, masks and decode
loop (daemon/sdk/ar), over graphs opened by scripts/common/build/runners.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.t2s import T2S, T2STables
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.shapes import MASK_VALUE, GraphShapes


@dataclass(frozen=True)
class T2SGeometry:
    """The T2S fields of ``GsvParams`` for a model exported at ``shapes``."""

    width: int
    layers: int
    heads: int
    head_dim: int
    vocab: int
    prefill_len: int
    kv_buckets: tuple[int, ...]
    mask_value: float
    bert_dim: int


#: the geometry's fields named as the model's T2SDims
DIMS = ("layers", "heads", "head_dim", "vocab", "bert_dim")


def _f32(t: Any) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().float().numpy())


def t2s_tables(model: T2SModel) -> T2STables:
    """The tables the bundle's ``cpu/`` gets (scripts/gptsovits/export/cpu_tables.py),
    as ``CpuTables.load`` reads them."""
    pe = _f32(model.pe)
    alpha = _f32(model.ar_text_position.alpha), _f32(model.ar_audio_position.alpha)
    return T2STables(
        text_emb=_f32(model.ar_text_embedding.word_embeddings.weight),
        bert_w=_f32(model.bert_proj.weight),
        bert_b=_f32(model.bert_proj.bias),
        audio_emb=_f32(model.ar_audio_embedding.word_embeddings.weight),
        text_pe=alpha[0][0] * pe,
        audio_pe=alpha[1][0] * pe,
        predict=_f32(model.ar_predict_layer.weight),
    )


def t2s_driver(model: T2SModel, shapes: GraphShapes, runners: Mapping[str, Any]) -> T2S:
    """The engine's T2S driver over ``runners`` (t2s_prefill + the decode
    buckets among them)."""
    d = model.dims
    prefix = layout.T2S_DECODE_PREFIX
    buckets = tuple(
        sorted(int(k[len(prefix) :]) for k in runners if k.startswith(prefix))
    )
    same = {name: getattr(d, name) for name in DIMS}
    geometry = T2SGeometry(
        width=d.dim,
        prefill_len=shapes.prefill_len,
        kv_buckets=buckets,
        mask_value=MASK_VALUE,
        **same,
    )
    return T2S(geometry, t2s_tables(model), runners)
