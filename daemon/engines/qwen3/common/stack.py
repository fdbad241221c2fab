"""A Qwen3 decoder stack on the NPU: the shared KV stack plus its RoPE rows.

The CPU's share of a stack (the ASR text decoder, the TTS talker) beyond the
SDK's prefill and KV buckets (daemon/sdk/ar/stack.py): the RoPE cos/sin tables
(plain 1-D RoPE: upstream's M-RoPE rows are equal for prompts of one modality,
so its interleaving is the identity; docs/qwen3.md, text decoder, TTS
components), the prefill's causal mask and ``last`` row.  An engine's decoder
subclasses :class:`Stack` and adds what it reads back (logits, the talker's
``h``) and its own accounting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np

from daemon.engines.qwen3.common.shapes import DecoderShape
from daemon.sdk.ar import masks
from daemon.sdk.ar.kv import KvGraph
from daemon.sdk.ar.rope import rope_tables
from daemon.sdk.ar.stack import Family, KvStack, Write
from daemon.sdk.graphs import Runner


class Buckets(Protocol):
    """What a bundle's params say of a stack's buckets (AsrParams, TtsParams)."""

    @property
    def prefill_buckets(self) -> tuple[int, ...]: ...
    @property
    def kv_buckets(self) -> tuple[int, ...]: ...
    @property
    def mask_value(self) -> float: ...


class Stack(KvStack):
    """A stack's ``prefill`` buckets and ``decode`` KV buckets, bound once, and
    its RoPE tables over the largest KV bucket."""

    def __init__(
        self,
        graphs: Mapping[str, Runner],
        d: DecoderShape,
        p: Buckets,
        unit: str,
        prefill: Family,
        decode: Family,
    ) -> None:
        """``unit`` names a prompt row in refusals ("token": "a 65-token
        prompt exceeds ...")."""
        super().__init__(
            graphs, prefill, p.prefill_buckets, decode, p.kv_buckets, p.mask_value, unit
        )
        self.cos, self.sin = rope_tables(
            d.head_dim, d.rope_theta, d.attention_scaling, p.kv_buckets[-1]
        )

    def prompt(self, x: np.ndarray) -> Write:
        """Writes the prompt rows ``x`` [S, H] into a prefill graph: padding
        zeroed and masked, ``last`` at row S - 1."""
        s = len(x)

        def write(b: dict[str, np.ndarray]) -> None:
            b["x"][0, :s] = x
            b["x"][0, s:] = 0.0
            masks.causal(b["mask"], s, self.mask_value)
            b["cos"][0, :s], b["sin"][0, :s] = self.cos[:s], self.sin[:s]
            b["cos"][0, s:], b["sin"][0, s:] = 0.0, 0.0
            b["last"][...] = 0.0
            b["last"][0, s - 1] = 1.0

        return write

    def run_step(self, bucket: KvGraph, x: np.ndarray) -> dict[str, np.ndarray]:
        """One decode step in ``bucket`` on the row ``x`` at the next position
        (the one right after the cache): its bound buffers (views)."""
        pos = bucket.filled
        b = bucket.bind()
        b["x"][0, 0] = x
        b["cos"][0, 0], b["sin"][0, 0] = self.cos[pos], self.sin[pos]
        bucket.step()
        return b
