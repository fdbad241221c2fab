"""Additive attention masks: 0 where a query may attend, ``value`` where not.

The graphs add the mask to the attention scores, so a blocked score becomes
``score + value``; a large negative ``value`` (hexvoice bundles: -100, the
bundle's ``mask_value``) stays finite in fp16, where -inf would turn a fully
blocked padding row into NaNs.

A decode step's mask is one row over the cache (:class:`daemon.sdk.ar.kv.
KvGraph` keeps it); a prefill's is a square over the prompt, written here.
"""

from __future__ import annotations

import numpy as np


def prefix_causal(out: np.ndarray, n_prefix: int, n_causal: int, value: float) -> None:
    """Fill the square ``out`` [..., P, P] (in place) for a prompt of a
    bidirectional prefix followed by a causal part; rows and columns past
    ``n_prefix + n_causal`` (padding) are blocked.

    Prefix rows see the whole prefix and never the causal part; causal rows see
    the whole prefix and the causal positions up to their own. GPT-SoVITS's T2S
    prefill is prefix = text, causal = prompt audio (docs/gpt-sovits.md, T2S);
    a plain decoder-only prompt (Qwen3) is ``n_prefix = 0``.
    """
    s = n_prefix + n_causal
    if s > out.shape[-1] or out.shape[-1] != out.shape[-2]:
        raise ValueError(
            f"{n_prefix} + {n_causal} positions do not fit a {out.shape} mask"
        )
    for lead in np.ndindex(out.shape[:-2]):  # views: writes land in ``out``
        square = out[lead]
        square[...] = value
        square[:s, :n_prefix] = 0.0
        causal = square[n_prefix:s, n_prefix:s]
        causal[np.tril_indices(n_causal)] = 0.0


def causal(out: np.ndarray, n: int, value: float) -> None:
    """Causal mask over the first ``n`` positions of ``out`` [..., P, P]."""
    prefix_causal(out, 0, n, value)


def open_prefix(out: np.ndarray, filled: int, value: float) -> None:
    """A decode row ``out`` [..., L]: the first ``filled`` cache rows visible."""
    if filled > out.shape[-1]:
        raise ValueError(f"{filled} positions exceed the KV length {out.shape[-1]}")
    out[..., :filled] = 0.0
    out[..., filled:] = value
