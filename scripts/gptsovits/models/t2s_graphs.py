"""The two exported T2S graphs over a T2SModel, t2s_prefill and t2s_decode
(I/O in models/t2s.py), and the additive masks the runtime feeds them.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from daemon.sdk.ar import masks
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.shapes import MASK_VALUE


class T2SPrefill(nn.Module):
    """Exported graph t2s_prefill. `kv_dtype` is the dtype of the k/v outputs:
    float16 lets the runtime keep fp16 caches without converting (compute and
    the other tensors stay float32 in the ONNX graph)."""

    def __init__(self, model: T2SModel, kv_dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.model, self.kv_dtype = model, kv_dtype

    def forward(self, xy: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        x, ks, vs = xy, [], []
        for block in self.model.h.layers:
            x, k, v = block.prefill(x, mask[0, 0])
            ks.append(k)
            vs.append(v)
        return (
            x,
            _cast(torch.stack(ks), self.kv_dtype),
            _cast(torch.stack(vs), self.kv_dtype),
        )


class T2SDecode(nn.Module):
    """Exported graph t2s_decode (one KV bucket per export); `kv_dtype` as for
    T2SPrefill, applied to k_cache, v_cache, k_new and v_new."""

    def __init__(self, model: T2SModel, kv_dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.model, self.kv_dtype = model, kv_dtype

    def forward(
        self, x: Tensor, k_cache: Tensor, v_cache: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        k_cache, v_cache = _cast(k_cache, torch.float32), _cast(v_cache, torch.float32)
        ks, vs = [], []
        for i, block in enumerate(self.model.h.layers):
            x, k, v = block.decode(x, k_cache[i], v_cache[i], mask[0])
            ks.append(k)
            vs.append(v)
        logits = self.model.ar_predict_layer(x).reshape(1, self.model.dims.vocab)
        return (
            logits,
            _cast(torch.stack(ks), self.kv_dtype),
            _cast(torch.stack(vs), self.kv_dtype),
        )


def _cast(x: Tensor, dtype: torch.dtype) -> Tensor:
    return x if x.dtype == dtype else x.to(dtype)


def prefill_mask(n_text: int, n_audio: int, length: int) -> np.ndarray:
    """Additive [1,1,P,P] prefill mask as the runtime writes it (text = the
    bidirectional prefix, prompt audio = the causal part; padding blocked)."""
    if n_text + n_audio > length:
        raise ValueError(f"{n_text} phones + {n_audio} prompt tokens exceed P={length}")
    mask = np.empty((1, 1, length, length), np.float32)
    masks.prefix_causal(mask, n_text, n_audio, MASK_VALUE)
    return mask


def decode_mask(filled: int, length: int) -> np.ndarray:
    """Additive [1,1,1,L] decode mask: the first `filled` cache rows are valid."""
    mask = np.empty((1, 1, 1, length), np.float32)
    masks.open_prefix(mask, filled, MASK_VALUE)
    return mask
