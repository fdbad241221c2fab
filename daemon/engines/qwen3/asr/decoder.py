"""The text decoder: prefill at the smallest prompt bucket, then KV-cached steps.

Qwen3's decoder (docs/qwen3.md, text decoder) on the shared Qwen3 stack
(daemon/engines/qwen3/common/stack.py: RoPE cos/sin, plain 1-D RoPE since upstream's
M-RoPE rows are equal for audio-only prompts, with the rope init's attention
scaling; the additive masks; the K/V write-back) plus the token embeddings.
The engine's free run and the parity tests' teacher forcing both go through
:meth:`Decoder.start` and its ``feed``, so a test measures the code that runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

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
from daemon.sdk.ar.stats import DecodeStats
from daemon.sdk.graphs import Runner


class Decoder(Stack):
    """Prefill + decode steps over a bundle's ``prefill_<P>`` / ``decode_<L>``."""

    #: host-side accounting of its decode steps (benchmarks, tests)
    stats: DecodeStats

    def __init__(
        self, p: AsrParams, embed: np.ndarray, graphs: Mapping[str, Runner]
    ) -> None:
        prefill = (prefill_key, partial(prefill_io, p))
        decode = (decode_key, partial(decode_io, p))
        super().__init__(graphs, p.decoder, p, "token", prefill, decode)
        self.p, self.embed = p, embed

    def prefill(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Logits [V] at the last of the prompt's ``x`` [S, H] rows, and k, v."""
        b = self.run_prefill(len(x), self.prompt(x))
        return np.array(b["logits"][0], np.float32), b["k"], b["v"]

    def start(self, x: np.ndarray, tokens: int) -> tuple[np.ndarray, loop.Feed]:
        """Prefill ``x`` [S, H] in the smallest KV bucket holding S + ``tokens``
        positions: the prefill's logits and the step on a token
        (``loop.free_run`` / ``loop.teacher_forced``)."""
        b, bucket = self.open(len(x), len(x) + tokens, self.prompt(x))
        return np.array(b["logits"][0], np.float32), self._feed(bucket)

    def _feed(self, bucket: KvGraph) -> loop.Feed:
        out = bucket.bind()["logits"][0]
        embed = self.embed

        def step(token: int) -> np.ndarray:
            self.run_step(bucket, embed[token])
            return out

        return self.feed(bucket, step)

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
