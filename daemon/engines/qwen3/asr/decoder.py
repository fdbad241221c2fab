"""The text decoder: prefill at the smallest prompt bucket, then KV-cached steps.

Qwen3's decoder (docs/qwen3.md, text decoder) on the shared Qwen3 stack
(daemon/engines/qwen3/common/stack.py: RoPE cos/sin, plain 1-D RoPE since upstream's
M-RoPE rows are equal for audio-only prompts, with the rope init's attention
scaling; the additive masks; the K/V write-back) plus the token embeddings.
The engine's free run and the parity tests' teacher forcing both go through
:meth:`Decoder.start` and its ``feed``, so a test measures the code that runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.qwen3.asr.params import (
    AsrParams,
    decode_io,
    decode_key,
    prefill_io,
    prefill_key,
)
from daemon.engines.qwen3.common.stack import Stack
from daemon.sdk.ar import loop
from daemon.sdk.ar.kv import KvGraph

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner


@dataclass
class DecodeStats:
    """Host-side accounting of decode steps (benchmarks, tests)."""

    steps: int = 0
    step_seconds: float = 0.0  # whole steps, choosing the token included
    graph_seconds: float = 0.0  # inside Runner.execute
    prefill_seconds: float = 0.0
    #: when set, each step's host seconds are appended (benchmarks)
    host_steps: list[float] | None = None

    @property
    def host_seconds_per_step(self) -> float:
        return (self.step_seconds - self.graph_seconds) / max(self.steps, 1)


class Decoder(Stack):
    """Prefill + decode steps over a bundle's ``prefill_<P>`` / ``decode_<L>``."""

    def __init__(
        self, p: AsrParams, embed: np.ndarray, graphs: Mapping[str, Runner]
    ) -> None:
        super().__init__(graphs, p.decoder, p, "token",
                         prefill=(prefill_key, partial(prefill_io, p)),
                         decode=(decode_key, partial(decode_io, p)))  # fmt: skip
        self.p, self.embed = p, embed
        self.stats = DecodeStats()

    def prefill(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Logits [V] at the last of the prompt's ``x`` [S, H] rows, and k, v."""
        graph = self.prefill_graph(len(x))
        t0 = time.perf_counter()
        b = self.run_prefill(graph, x)
        self.stats.prefill_seconds += time.perf_counter() - t0
        return np.array(b["logits"][0], np.float32), b["k"], b["v"]

    def start(self, x: np.ndarray, tokens: int) -> tuple[np.ndarray, loop.Feed]:
        """Prefill ``x`` [S, H] in the smallest KV bucket holding S + ``tokens``
        positions: the prefill's logits and the step on a token
        (``loop.free_run`` / ``loop.teacher_forced``)."""
        s = len(x)
        bucket = self.buckets.for_positions(s + tokens)
        logits, k, v = self.prefill(x)
        bucket.start(k, v, s)
        return logits, self._feed(bucket)

    def _feed(self, bucket: KvGraph) -> loop.Feed:
        out = bucket.bind()["logits"][0]
        stats, embed = self.stats, self.embed
        t0 = time.perf_counter()

        def feed(token: int) -> np.ndarray:
            nonlocal t0
            self.run_step(bucket, embed[token])
            t1 = time.perf_counter()
            stats.steps += 1
            stats.step_seconds += t1 - t0
            stats.graph_seconds += bucket.graph_seconds
            if stats.host_steps is not None:
                stats.host_steps.append(t1 - t0 - bucket.graph_seconds)
            t0 = t1
            return out

        return feed

    def warmup(self) -> None:
        """One prefill per bucket and one step per KV bucket."""
        x = np.zeros((1, self.p.hidden), np.float32)
        for graph in self.prefills.values():
            graph.bind()
        _, k, v = self.prefill(x)
        for n in list(self.prefills)[1:]:
            self.prefill(np.zeros((n, self.p.hidden), np.float32))
        for bucket in self.buckets.values():
            bucket.start(k, v, 1)
            self._feed(bucket)(0)
