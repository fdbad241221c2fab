"""A decoder on the NPU: its prefill graphs and decode KV buckets, bound once.

GPT-SoVITS's T2S (one prefill length; docs/gpt-sovits.md, T2S), the Qwen3-ASR
text decoder and the Qwen3-TTS talker (prefill buckets; docs/qwen3.md, graph
set) run a decoder the same way: a prompt's rows go through the smallest
prefill graph that holds them, the K/V it returns open the smallest KV bucket
(kv.py) that holds the prompt and the tokens to come, and each token is one
decode step there.  What goes into the graphs (embeddings, positions, RoPE
rows, the prefill mask's shape) is the engine's: it writes it into the bound
buffers; the stack picks the graphs, moves the caches and keeps the account
(stats.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Final

import numpy as np

from daemon.sdk.ar import loop
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.ar.kv import CapacityError, KvBuckets, KvGraph
from daemon.sdk.ar.stats import DecodeStats
from daemon.sdk.graphs import Runner

Shapes = Mapping[str, tuple[int, ...]]
#: a graph family: bucket size -> its graph's key, bucket size -> the I/O it binds
Family = tuple[Callable[[int], str], Callable[[int], Shapes]]
#: puts a prompt into a prefill graph's bound buffers (by tensor name)
Write = Callable[[dict[str, np.ndarray]], None]
#: one decode step on a token, in a bucket: that step's logits
Step = Callable[[int], np.ndarray]

#: the prompt's K/V a prefill graph returns (every decoder's contract)
PREFILL_K: Final = "k"
PREFILL_V: Final = "v"


class KvStack:
    """A decoder's ``prefill`` graphs by prompt length and its ``decode`` KV
    buckets by cache length, with one account of their work (``stats``)."""

    def __init__(
        self,
        graphs: Mapping[str, Runner],
        prefill: Family,
        prefill_sizes: Iterable[int],
        decode: Family,
        kv_sizes: Iterable[int],
        mask_value: float,
        unit: str = "position",
    ) -> None:
        """``unit`` names a prompt row in refusals ("token": "a 65-token
        prompt exceeds ...")."""
        self.mask_value, self.unit = mask_value, unit
        self.prefills = {
            n: BoundGraph(*_graph(graphs, prefill, n))
            for n in sorted(set(prefill_sizes))
        }
        if not self.prefills:
            raise ValueError("no prefill graph")
        self.buckets = KvBuckets(
            {n: KvGraph(*_graph(graphs, decode, n), n, mask_value) for n in kv_sizes}
        )
        self.stats = DecodeStats()

    @property
    def max_prompt(self) -> int:
        return max(self.prefills)

    @property
    def max_positions(self) -> int:
        return self.buckets.largest

    def prefill_graph(self, rows: int) -> BoundGraph:
        """The smallest prefill graph holding ``rows`` prompt rows."""
        size = next((n for n in self.prefills if rows <= n), None)
        if size is None:
            raise CapacityError(
                f"a {rows}-{self.unit} prompt exceeds the largest prefill bucket "
                f"{self.max_prompt}"
            )
        return self.prefills[size]

    def bucket_for(self, positions: int, kv_len: int | None = None) -> KvGraph:
        """The smallest KV bucket holding ``positions``, or the ``kv_len`` one
        (parity gates pick theirs; CapacityError if it holds fewer)."""
        if kv_len is None:
            return self.buckets.for_positions(positions)
        bucket = self.buckets[kv_len]
        if positions > bucket.length:
            raise CapacityError(f"{positions} positions exceed bucket {kv_len}")
        return bucket

    def run_prefill(self, rows: int, write: Write) -> dict[str, np.ndarray]:
        """The smallest prefill graph holding ``rows`` prompt rows, run on what
        ``write`` put into its bound buffers: those buffers (views, valid until
        the next prefill)."""
        graph = self.prefill_graph(rows)
        t0 = time.perf_counter()
        b = graph.bind()
        write(b)
        graph.execute()
        self.stats.prefill_seconds += time.perf_counter() - t0
        return b

    def open(
        self, rows: int, positions: int, write: Write, kv_len: int | None = None
    ) -> tuple[dict[str, np.ndarray], KvGraph]:
        """Prefill a ``rows``-row prompt (``write`` puts it in) and start the KV
        bucket for ``positions`` (the prompt and the tokens to come; or the
        ``kv_len`` one) on its K/V: the prefill's buffers and the bucket.  Both
        graphs are chosen before either runs, so a prompt that does not fit
        costs no graph call."""
        self.prefill_graph(rows)
        bucket = self.bucket_for(positions, kv_len)
        b = self.run_prefill(rows, write)
        bucket.start(b[PREFILL_K], b[PREFILL_V], rows)
        self.stats.run(bucket.length)
        return b, bucket

    def feed(self, bucket: KvGraph, step: Step) -> loop.Feed:
        """``step`` (one decode step in ``bucket`` on a token) with each call's
        time in ``stats``: from the end of the call before (from here for the
        first), so choosing the token is part of its step."""
        stats = self.stats
        t0 = time.perf_counter()

        def feed(token: int) -> np.ndarray:
            nonlocal t0
            out = step(token)
            t1 = time.perf_counter()
            stats.step(t1 - t0, bucket.graph_seconds)
            t0 = t1
            return out

        return feed


def _graph(
    graphs: Mapping[str, Runner], family: Family, n: int
) -> tuple[Runner, Shapes]:
    key, io = family
    return graphs[key(n)], io(n)
