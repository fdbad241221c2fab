"""A Qwen3 decoder stack's sizes and buckets, as bundle params hold them, and
its graphs' I/O.

The team contract of a stack's graphs (Ly layers, Kh kv heads, hd head_dim,
H the stack's hidden, Hx its input rows' width, V its vocab)::

    prefill_<P>  x [1,P,H], mask [1,1,P,P], cos/sin [1,P,hd], last [1,P]
                 -> logits [1,V], k, v [Ly,Kh,P,hd]
    decode_<L>   x [1,1,Hx], k_cache/v_cache [Ly,Kh,L,hd], mask [1,1,1,L],
                 cos/sin [1,1,hd] -> logits [1,V], k_new/v_new [Ly,Kh,1,hd]

An engine adds its own outputs (the talker's ``h``) and inputs (the code
predictor's ``head``) to these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from daemon.config.reader import invalid

Count = Annotated[int, msgspec.Meta(ge=1)]
Index = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[float, msgspec.Meta(gt=0)]
Sizes = Annotated[tuple[Count, ...], msgspec.Meta(min_length=1)]
Text = Annotated[str, msgspec.Meta(min_length=1)]
Shapes = dict[str, tuple[int, ...]]


@dataclass(frozen=True)
class DecoderShape:
    """A Qwen3 decoder stack's sizes (ASR text decoder, TTS talker or predictor)."""

    hidden: Count
    head_dim: Count
    layers: Count
    kv_heads: Count
    vocab: Count
    rope_theta: Positive
    #: the rope init's attention_scaling (cos and sin are multiplied by it)
    attention_scaling: Positive

    def __post_init__(self) -> None:
        if self.head_dim % 2:
            raise invalid("head_dim", "an even number (RoPE halves)", self.head_dim)


def settle_buckets(p: Any) -> None:
    """In a frozen params' ``__post_init__``: its ``prefill_buckets`` and
    ``kv_buckets`` sorted without repeats, the largest KV bucket past the
    largest prefill (a prompt that fills one still gets a step)."""
    for key in ("prefill_buckets", "kv_buckets"):
        object.__setattr__(p, key, tuple(sorted(set(getattr(p, key)))))
    if p.kv_buckets[-1] <= p.prefill_buckets[-1]:
        raise invalid(
            "kv_buckets",
            f"a largest bucket > the largest prefill ({p.prefill_buckets[-1]})",
            list(p.kv_buckets),
        )


def prefill_io(d: DecoderShape, n: int) -> Shapes:
    """A ``prefill_<n>`` graph's I/O: the prompt in, logits at ``last`` and K/V."""
    kv = (d.layers, d.kv_heads, n, d.head_dim)
    return {
        "x": (1, n, d.hidden),
        "mask": (1, 1, n, n),
        "cos": (1, n, d.head_dim),
        "sin": (1, n, d.head_dim),
        "last": (1, n),
        "logits": (1, d.vocab),
        "k": kv,
        "v": kv,
    }


def step_io(d: DecoderShape, x_hidden: int, kv_len: int) -> Shapes:
    """A decode step's I/O on a ``kv_len``-row cache, its input ``x_hidden`` wide."""
    cache = (d.layers, d.kv_heads, kv_len, d.head_dim)
    new = (d.layers, d.kv_heads, 1, d.head_dim)
    return {
        "x": (1, 1, x_hidden),
        "k_cache": cache,
        "v_cache": cache,
        "mask": (1, 1, 1, kv_len),
        "cos": (1, 1, d.head_dim),
        "sin": (1, 1, d.head_dim),
        "logits": (1, d.vocab),
        "k_new": new,
        "v_new": new,
    }
