"""The talker: prefill at the smallest prompt bucket, then KV-cached steps.

Each call gives the codec head's logits and ``h``, the final-normed hidden of
the row (upstream ``past_hidden``, which the code predictor starts from).  The
CPU's share is the shared Qwen3 stack's (daemon/engines/qwen3/common/stack.py): the
RoPE tables (the talker's M-RoPE is plain RoPE for equal position rows:
docs/qwen3.md, TTS components), the masks and the K/V write-back.  A request starts
in the smallest KV bucket holding its prompt and grows into larger ones as
frames come (``KvBuckets.grow``), so a short utterance never pays for the
longest cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from daemon.engines.qwen3.common.stack import Stack
from daemon.engines.qwen3.tts.graphio import talker_decode_io, talker_prefill_io
from daemon.engines.qwen3.tts.params import (
    TtsParams,
    talker_decode_key,
    talker_prefill_key,
)
from daemon.sdk.ar.kv import KvGraph
from daemon.sdk.graphs import Runner


@dataclass
class GraphTime:
    """Seconds spent inside ``Runner.execute``, by graph family."""

    talker: float = 0.0
    predictor: float = 0.0
    calls: dict[str, int] = field(default_factory=dict)

    def count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1


class Talker(Stack):
    """``talker_prefill_<P>`` / ``talker_decode_<L>`` of one bundle; one
    request at a time (``start``, then ``step`` per frame)."""

    def __init__(
        self, p: TtsParams, graphs: Mapping[str, Runner], time: GraphTime
    ) -> None:
        prefill = (talker_prefill_key, partial(talker_prefill_io, p))
        decode = (talker_decode_key, partial(talker_decode_io, p))
        super().__init__(graphs, p.talker, p, "row talker", prefill, decode)
        self.p, self.time = p, time
        self.bucket: KvGraph | None = None

    @property
    def positions(self) -> int:
        """Positions the current request holds (prompt + steps)."""
        return 0 if self.bucket is None else self.bucket.filled

    def start(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Prefill the prompt rows ``x`` [S, Ht]: logits [V] and h [Ht] (copies)
        at its last row; the KV bucket holds the S positions after it."""
        s = len(x)
        b, self.bucket = self.open(s, s + 1, self.prompt(x))
        self.time.talker += self.prefill_graph(s).graph_seconds
        self.time.count("talker_prefill")
        return np.array(b["logits"][0], np.float32), np.array(b["h"][0], np.float32)

    def step(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One decode step on the row ``x`` [Ht] at the next position: logits
        [V] and h [Ht], views of the bound outputs (valid until the next step)."""
        if self.bucket is None:
            raise RuntimeError("talker: start() a prompt first")
        self.bucket = bucket = self.buckets.grow(self.bucket, self.bucket.filled + 1)
        b = self.run_step(bucket, x)
        self.time.talker += bucket.graph_seconds
        self.time.count("talker_decode")
        return b["logits"][0], b["h"][0]

    def warmup(self) -> None:
        """Every prefill bucket once, and one step in every KV bucket."""
        hidden = self.p.talker.hidden
        for n in self.prefills:
            self.start(np.zeros((min(n, self.max_prompt), hidden), np.float32))
        small = np.zeros((1, hidden), np.float32)
        for bucket in self.buckets.values():
            self.start(small)
            assert self.bucket is not None
            bucket.start(self.bucket.k, self.bucket.v, 1)
            self.bucket = bucket
            self.step(small[0])
        self.bucket = None
