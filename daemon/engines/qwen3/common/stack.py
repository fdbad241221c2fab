"""A Qwen3 decoder stack on the NPU: prefill buckets, KV buckets, RoPE rows.

The CPU's share of a stack (the ASR text decoder, the TTS talker): the RoPE
cos/sin tables (plain 1-D RoPE: upstream's M-RoPE rows are equal for prompts of
one modality, so its interleaving is the identity; docs/qwen3.md, text decoder,
TTS components), the prefill's causal mask and ``last`` row, and the K/V write-back
(daemon/sdk/ar/kv.py).  An engine's decoder subclasses :class:`Stack` and
adds what it reads back (logits, the talker's ``h``) and its own accounting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np

from daemon.engines.qwen3.common.shapes import DecoderShape, Shapes
from daemon.sdk.ar import masks
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.ar.kv import CapacityError, KvBuckets, KvGraph
from daemon.sdk.ar.rope import rope_tables

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner

#: a graph family: bucket size -> its graph's key, bucket size -> the shapes it binds
Family = tuple[Callable[[int], str], Callable[[int], Shapes]]


class Buckets(Protocol):
    """What a bundle's params say of a stack's buckets (AsrParams, TtsParams)."""

    @property
    def prefill_buckets(self) -> tuple[int, ...]: ...
    @property
    def kv_buckets(self) -> tuple[int, ...]: ...
    @property
    def mask_value(self) -> float: ...


class Stack:
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
        self.mask_value, self.unit = p.mask_value, unit
        self.prefills = {
            n: BoundGraph(*_graph(graphs, prefill, n)) for n in p.prefill_buckets
        }
        self.buckets = KvBuckets(
            {
                n: KvGraph(*_graph(graphs, decode, n), n, p.mask_value)
                for n in p.kv_buckets
            }
        )
        self.cos, self.sin = rope_tables(
            d.head_dim, d.rope_theta, d.attention_scaling, p.kv_buckets[-1]
        )

    @property
    def max_prompt(self) -> int:
        return max(self.prefills)

    @property
    def max_positions(self) -> int:
        return self.buckets.largest

    def prefill_graph(self, rows: int) -> BoundGraph:
        """The smallest prefill bucket holding ``rows`` prompt rows."""
        size = next((n for n in self.prefills if rows <= n), None)
        if size is None:
            raise CapacityError(
                f"a {rows}-{self.unit} prompt exceeds the largest prefill bucket "
                f"{self.max_prompt}"
            )
        return self.prefills[size]

    def run_prefill(self, graph: BoundGraph, x: np.ndarray) -> dict[str, np.ndarray]:
        """Execute ``graph`` on the prompt rows ``x`` [S, H] (padding zeroed and
        masked, ``last`` at row S - 1): its bound buffers (views)."""
        s = len(x)
        b = graph.bind()
        b["x"][0, :s] = x
        b["x"][0, s:] = 0.0
        masks.causal(b["mask"], s, self.mask_value)
        b["cos"][0, :s], b["sin"][0, :s] = self.cos[:s], self.sin[:s]
        b["cos"][0, s:], b["sin"][0, s:] = 0.0, 0.0
        b["last"][...] = 0.0
        b["last"][0, s - 1] = 1.0
        graph.execute()
        return b

    def run_step(self, bucket: KvGraph, x: np.ndarray) -> dict[str, np.ndarray]:
        """One decode step in ``bucket`` on the row ``x`` at the next position
        (the one right after the cache): its bound buffers (views)."""
        pos = bucket.filled
        b = bucket.bind()
        b["x"][0, 0] = x
        b["cos"][0, 0], b["sin"][0, 0] = self.cos[pos], self.sin[pos]
        bucket.step()
        return b


def _graph(
    graphs: Mapping[str, Runner], family: Family, n: int
) -> tuple[Runner, Shapes]:
    key, io = family
    return graphs[key(n)], io(n)
