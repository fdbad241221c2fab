"""The CPU-side tables of a bundle (``cpu/*.npy``, names from layout.py).

Embeddings, the positional table, the T2S predict layer and the semantic codebook
stay on the CPU (by design: index inputs never reach the NPU), so the runtime needs
them as plain float32 arrays.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from daemon.engines.gptsovits import layout
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel

TABLE_FILES = (
    layout.T2S_TEXT_EMB,
    layout.T2S_BERT_PROJ_W,
    layout.T2S_BERT_PROJ_B,
    layout.T2S_AUDIO_EMB,
    layout.T2S_POS_ALPHA,
    layout.T2S_PE,
    layout.T2S_PREDICT,
    layout.VITS_TEXT_EMB,
    layout.VITS_CODEBOOK,
)


def _np(t: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().float().numpy())


def tables(t2s: T2SModel, sovits: SovitsModel) -> dict[str, np.ndarray]:
    return {
        layout.T2S_TEXT_EMB: _np(t2s.ar_text_embedding.word_embeddings.weight),
        layout.T2S_BERT_PROJ_W: _np(t2s.bert_proj.weight),
        layout.T2S_BERT_PROJ_B: _np(t2s.bert_proj.bias),
        layout.T2S_AUDIO_EMB: _np(t2s.ar_audio_embedding.word_embeddings.weight),
        layout.T2S_POS_ALPHA: _np(
            torch.cat([t2s.ar_text_position.alpha, t2s.ar_audio_position.alpha])
        ),
        layout.T2S_PE: _np(t2s.pe),
        layout.T2S_PREDICT: _np(t2s.ar_predict_layer.weight),
        layout.VITS_TEXT_EMB: _np(sovits.enc_p.text_embedding.weight),
        layout.VITS_CODEBOOK: _np(sovits.quantizer.embed),
    }


def write_tables(root: Path, t2s: T2SModel, sovits: SovitsModel) -> list[Path]:
    paths = []
    for rel, array in tables(t2s, sovits).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array.astype(np.float32))
        paths.append(path)
    return paths
