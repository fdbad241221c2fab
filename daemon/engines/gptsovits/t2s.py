"""T2S (GPT) host loop: prefill assembly, KV buckets, decode steps, sampling.

The NPU graphs (scripts/gsv/models/t2s.py) are

    t2s_prefill    xy [1,P,W], mask [1,1,P,P] -> h [1,P,W], k, v [layers,H,P,dh]
    t2s_decode_L   x [1,1,W], k_cache, v_cache [layers,H,L,dh], mask [1,1,1,L]
                   -> logits [1,V], k_new, v_new [layers,H,1,dh]

Everything else is here (shared/docs/gpt-sovits-v2pro.md §4.3-4.4): text and
audio embeddings with their scaled positions, the additive prefill mask (text
rows see all text and never audio; audio rows see all text and earlier audio),
the predict layer on the prefill's last row, and the KV caches. Each bucket's
caches, input and output buffers are allocated and bound once; a decode step
writes the token's embedding into the bound ``x``, executes, copies
``k_new``/``v_new`` into row ``pos`` of the caches and opens ``pos`` in the mask.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from daemon.engine.bundle import BundleError
from daemon.engine.cancel import CancelToken
from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.bound import BoundGraph
from daemon.engines.gptsovits.layout import GsvParams
from daemon.engines.gptsovits.sampling import TokenSampler
from daemon.engines.gptsovits.tables import CpuTables

if TYPE_CHECKING:
    from daemon.engine.graphs import Runner


class CapacityError(ValueError):
    """A segment does not fit the static graphs; the engine re-splits it."""


@dataclass(frozen=True)
class T2SResult:
    tokens: np.ndarray  # int64 [n] generated semantic tokens (stop token dropped)
    capped: bool  # reached the token cap without a stop


@dataclass
class T2SStats:
    """Host-side accounting of decode steps (for benchmarks)."""

    steps: int = 0
    step_seconds: float = 0.0  # whole decode steps, incl. the graph
    graph_seconds: float = 0.0  # inside Runner.execute
    prefill_seconds: float = 0.0
    segments: int = 0
    by_bucket: dict[int, int] = field(default_factory=dict)
    #: when set, each step's host seconds are appended (benchmarks: medians
    #: are robust to the preemptions a busy machine adds to an average)
    host_steps: list[float] | None = None

    @property
    def host_seconds_per_step(self) -> float:
        return (self.step_seconds - self.graph_seconds) / max(self.steps, 1)

    def reset(self) -> None:
        self.steps, self.step_seconds, self.graph_seconds = 0, 0.0, 0.0
        self.prefill_seconds, self.segments = 0.0, 0
        self.by_bucket.clear()
        if self.host_steps is not None:
            self.host_steps.clear()


class KvBucket(BoundGraph):
    """One ``t2s_decode_<L>`` graph with its K/V caches."""

    def __init__(self, runner: Runner, p: GsvParams, length: int) -> None:
        super().__init__(runner, L.t2s_decode_io(p, length))
        self.length = length
        self._mask_value = np.float32(p.mask_value)
        self.filled = 0
        self._high_water = 0

    def start(self, k: np.ndarray, v: np.ndarray, filled: int) -> None:
        """Load the prefill's first ``filled`` positions; clear what is left of
        earlier requests so a request's output never depends on the last one."""
        b = self.bind()
        stale = slice(filled, max(self._high_water, filled))
        for cache, new in ((b["k_cache"], k), (b["v_cache"], v)):
            cache[:, :, :filled] = new[:, :, :filled]
            cache[:, :, stale] = 0
        b["mask"][..., :filled] = 0.0
        b["mask"][..., filled:] = self._mask_value
        self.filled = self._high_water = filled

    @property
    def x(self) -> np.ndarray:
        """The bound input row [W] of the next step."""
        return self.buffers["x"][0, 0]

    def step(self) -> np.ndarray:
        """One decode step on the row written to ``x``; returns logits [V]."""
        b = self.buffers
        pos = self.filled
        if pos >= self.length:
            raise CapacityError(f"KV bucket {self.length} is full")
        self.execute()
        # The step attended to rows < pos plus its own k/v (in-graph); now its
        # k/v become row pos for the steps after it.
        b["k_cache"][:, :, pos] = b["k_new"][:, :, 0]
        b["v_cache"][:, :, pos] = b["v_new"][:, :, 0]
        b["mask"][0, 0, 0, pos] = 0.0
        self.filled = self._high_water = pos + 1
        return b["logits"][0]


class T2S:
    """Prefill + decode loop over the bundle's T2S graphs."""

    def __init__(
        self, p: GsvParams, tables: CpuTables, graphs: Mapping[str, Runner]
    ) -> None:
        self.p, self.tables = p, tables
        keys = [L.T2S_PREFILL, *(L.t2s_decode_key(n) for n in p.kv_buckets)]
        missing = [k for k in keys if k not in graphs]
        if missing:
            raise BundleError(f"gpt-sovits bundle lacks graph(s) {missing}")
        self.prefill_graph = BoundGraph(graphs[L.T2S_PREFILL], L.t2s_prefill_io(p))
        self.buckets = {
            n: KvBucket(graphs[L.t2s_decode_key(n)], p, n) for n in p.kv_buckets
        }
        self.stats = T2SStats()

    # ------------------------------------------------------------ assembly
    def embed_text(self, phones: np.ndarray, bert: np.ndarray) -> np.ndarray:
        """x = text_emb[phones] + bert_proj(bert) + alpha_t * pe  -> [n, W]."""
        t = self.tables
        proj = bert @ t.bert_w.T + t.bert_b
        return t.text_emb[phones] + proj + t.text_pe[: len(phones)]

    def embed_audio(self, tokens: np.ndarray, start: int) -> np.ndarray:
        t = self.tables
        return t.audio_emb[tokens] + t.audio_pe[start : start + len(tokens)]

    def prefill_mask(self, n_text: int, n_audio: int, out: np.ndarray) -> None:
        """Additive [1,1,P,P] mask (§4.3); padding rows and columns blocked."""
        s = n_text + n_audio
        m = out[0, 0]
        m[...] = self.p.mask_value
        m[:s, :n_text] = 0.0
        audio = m[n_text:s, n_text:s]
        audio[np.tril_indices(n_audio)] = 0.0

    def bucket_for(self, positions: int) -> KvBucket:
        for length in self.p.kv_buckets:
            if positions <= length:
                return self.buckets[length]
        raise CapacityError(
            f"{positions} KV positions exceed the largest bucket "
            f"{self.p.kv_buckets[-1]}"
        )

    def check_fits(self, n_phones: int, n_prompt: int, max_tokens: int) -> None:
        s = n_phones + n_prompt
        if s > self.p.prefill_len:
            raise CapacityError(
                f"{n_phones} phones + {n_prompt} prompt tokens exceed the "
                f"{self.p.prefill_len}-position prefill"
            )
        if s + max_tokens > self.tables.positions:
            raise CapacityError(f"{s + max_tokens} positions exceed the PE table")
        self.bucket_for(s + max_tokens)

    # ------------------------------------------------------------ running
    def prefill(
        self, phones: np.ndarray, bert: np.ndarray, prompt: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Logits [V] of the last position and the prefill's k, v."""
        n_x, n_y = len(phones), len(prompt)
        s = n_x + n_y
        b = self.prefill_graph.bind()
        xy = b["xy"]
        xy[0, :n_x] = self.embed_text(phones, bert)
        xy[0, n_x:s] = self.embed_audio(prompt, 0)
        xy[0, s:] = 0.0
        self.prefill_mask(n_x, n_y, b["mask"])
        t0 = time.perf_counter()
        self.prefill_graph.execute()
        self.stats.prefill_seconds += time.perf_counter() - t0
        h_last = np.asarray(b["h"][0, s - 1], np.float32)
        return self.tables.predict @ h_last, b["k"], b["v"]

    def generate(
        self,
        phones: np.ndarray,
        bert: np.ndarray,
        prompt: np.ndarray,
        sampler: TokenSampler,
        max_tokens: int,
        cancel: CancelToken | None = None,
    ) -> T2SResult:
        """Sample until a stop or ``max_tokens`` + 1 tokens (= capped).

        ``phones`` / ``bert`` [n, bert_dim] cover reference + target text;
        ``prompt`` is the reference's semantic tokens.
        """
        n_y = len(prompt)
        s = len(phones) + n_y
        self.check_fits(len(phones), n_y, max_tokens)
        bucket = self.bucket_for(s + max_tokens)
        if cancel is not None:
            cancel.check()
        logits, k, v = self.prefill(phones, bert, prompt)
        bucket.start(k, v, s)
        stats = self.stats
        stats.segments += 1
        stats.by_bucket[bucket.length] = stats.by_bucket.get(bucket.length, 0) + 1
        emb, pe, x = self.tables.audio_emb, self.tables.audio_pe, bucket.x
        tokens: list[int] = []
        # Step idx samples generated token idx; decode step idx feeds token idx
        # at audio position n_y + idx (§4.2). One extra sample past the cap
        # tells a segment that ends exactly at the cap from one that is cut.
        idx = 0
        t0 = time.perf_counter()
        while True:
            token, stop = sampler.step(logits)
            if stop:
                return T2SResult(np.array(tokens, np.int64), capped=False)
            tokens.append(token)
            if idx == max_tokens:
                return T2SResult(np.array(tokens[:max_tokens], np.int64), True)
            if cancel is not None:
                cancel.check()
            np.add(emb[token], pe[n_y + idx], out=x)
            logits = bucket.step()
            idx += 1
            t1 = time.perf_counter()
            stats.step_seconds += t1 - t0
            stats.graph_seconds += bucket.graph_seconds
            stats.steps += 1
            if stats.host_steps is not None:
                stats.host_steps.append(t1 - t0 - bucket.graph_seconds)
            t0 = t1

    def teacher_forced(
        self,
        phones: np.ndarray,
        bert: np.ndarray,
        prompt: np.ndarray,
        tokens: np.ndarray,
    ) -> np.ndarray:
        """Logits [1 + len(tokens), V] of the prefill and of one decode step per
        given token (for parity checks against the upstream algorithm)."""
        n_y = len(prompt)
        s = len(phones) + n_y
        self.check_fits(len(phones), n_y, len(tokens))
        bucket = self.bucket_for(s + len(tokens))
        logits, k, v = self.prefill(phones, bert, prompt)
        bucket.start(k, v, s)
        out = [np.array(logits, np.float32)]
        for idx, token in enumerate(tokens):
            bucket.x[...] = self.embed_audio(np.array([token]), n_y + idx)[0]
            out.append(np.array(bucket.step(), np.float32))
        return np.stack(out)

    def warmup(self) -> None:
        """One prefill and one step of every decode bucket."""
        phones = np.zeros(1, np.int64)
        bert = np.zeros((1, self.p.bert_dim), np.float32)
        prompt = np.zeros(1, np.int64)
        _, k, v = self.prefill(phones, bert, prompt)
        for bucket in self.buckets.values():
            bucket.start(k, v, 2)
            bucket.x[...] = self.embed_audio(np.zeros(1, np.int64), 1)[0]
            bucket.step()
