"""T2S (GPT) driver: prefill assembly, KV buckets and the decode loop of one model.

The NPU graphs (scripts/gptsovits/models/t2s.py) are

    t2s_prefill    xy [1,P,W], mask [1,1,P,P] -> h [1,P,W], k, v [layers,H,P,dh]
    t2s_decode_L   x [1,1,W], k_cache, v_cache [layers,H,L,dh], mask [1,1,1,L]
                   -> logits [1,V], k_new, v_new [layers,H,1,dh]

What is GPT-SoVITS's is here (docs/gpt-sovits.md, T2S): text
and audio embeddings with their scaled positions, the prefill mask's shape (text
rows see all text and never audio; audio rows see all text and earlier audio),
the predict layer on the prefill's last row. The bound caches, masks, sampler
and loop are the shared toolkit's (daemon/sdk/ar). The engine and the
build-time parity gates (scripts/gptsovits/verify) both run this driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Protocol

import numpy as np

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.sampling import TokenSampler
from daemon.sdk.ar import loop, masks
from daemon.sdk.ar.kv import CapacityError, KvGraph
from daemon.sdk.ar.stack import KvStack, Write
from daemon.sdk.ar.stats import DecodeStats
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import CancelToken
from daemon.sdk.graphs import Runner

__all__ = ["T2S", "CapacityError", "T2SParams", "T2SResult", "T2STables"]


class T2SParams(Protocol):
    """The fields of ``GsvParams`` the driver reads (the gates pass their own)."""

    @property
    def width(self) -> int: ...
    @property
    def layers(self) -> int: ...
    @property
    def heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def vocab(self) -> int: ...
    @property
    def prefill_len(self) -> int: ...
    @property
    def kv_buckets(self) -> tuple[int, ...]: ...
    @property
    def mask_value(self) -> float: ...
    @property
    def bert_dim(self) -> int: ...


@dataclass(frozen=True)
class T2STables:
    """The CPU-side T2S tables (``tables.CpuTables`` extends them with VITS's)."""

    text_emb: np.ndarray  # [phone_vocab, width]
    bert_w: np.ndarray  # [width, bert_dim]
    bert_b: np.ndarray  # [width]
    audio_emb: np.ndarray  # [vocab, width]
    text_pe: np.ndarray  # alpha_text * pe, [pe_rows, width]
    audio_pe: np.ndarray  # alpha_audio * pe, [pe_rows, width]
    predict: np.ndarray  # [vocab, width]

    @property
    def positions(self) -> int:
        return self.text_pe.shape[0]


@dataclass(frozen=True)
class T2SResult:
    tokens: np.ndarray  # int64 [n] generated semantic tokens (stop token dropped)
    capped: bool  # reached the token cap without a stop


class T2S:
    """Prefill + decode loop over the bundle's T2S graphs."""

    def __init__(
        self, p: T2SParams, tables: T2STables, graphs: Mapping[str, Runner]
    ) -> None:
        self.p, self.tables = p, tables
        keys = [L.T2S_PREFILL, *(L.t2s_decode_key(n) for n in p.kv_buckets)]
        missing = [k for k in keys if k not in graphs]
        if missing:
            raise BundleError(f"gpt-sovits bundle lacks graph(s) {missing}")
        # one prefill length; layout's I/O tables read only the T2SParams fields
        prefill_io = L.t2s_prefill_io(p)  # type: ignore[arg-type]
        self.stack = KvStack(
            graphs,
            (lambda _: L.T2S_PREFILL, lambda _: prefill_io),
            (p.prefill_len,),
            (L.t2s_decode_key, partial(L.t2s_decode_io, p)),  # type: ignore[arg-type]
            p.kv_buckets,
            p.mask_value,
        )
        self.prefill_graph = self.stack.prefills[p.prefill_len]
        self.buckets = self.stack.buckets

    @property
    def stats(self) -> DecodeStats:
        """Its decode steps' account (the stack's)."""
        return self.stack.stats

    # ------------------------------------------------------------ assembly
    def embed_text(self, phones: np.ndarray, bert: np.ndarray) -> np.ndarray:
        """x = text_emb[phones] + bert_proj(bert) + alpha_t * pe  -> [n, W]."""
        t = self.tables
        proj = bert @ t.bert_w.T + t.bert_b
        return t.text_emb[phones] + proj + t.text_pe[: len(phones)]

    def embed_audio(self, tokens: np.ndarray, start: int) -> np.ndarray:
        t = self.tables
        return t.audio_emb[tokens] + t.audio_pe[start : start + len(tokens)]

    def bucket_for(self, positions: int) -> KvGraph:
        return self.buckets.for_positions(positions)

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
        s = len(phones) + len(prompt)
        b = self.stack.run_prefill(s, self._prompt(phones, bert, prompt))
        return self._logits(b, s), b["k"], b["v"]

    def _prompt(
        self, phones: np.ndarray, bert: np.ndarray, prompt: np.ndarray
    ) -> Write:
        """Writes the prefill's inputs: text rows, then the prompt's audio rows."""
        n_x, n_y = len(phones), len(prompt)

        def write(b: dict[str, np.ndarray]) -> None:
            s = n_x + n_y
            xy = b["xy"]
            xy[0, :n_x] = self.embed_text(phones, bert)
            xy[0, n_x:s] = self.embed_audio(prompt, 0)
            xy[0, s:] = 0.0
            # text is the bidirectional prefix, the prompt audio the causal part
            masks.prefix_causal(b["mask"], n_x, n_y, self.p.mask_value)

        return write

    def _logits(self, b: Mapping[str, np.ndarray], s: int) -> np.ndarray:
        """The predict layer on the prefill's last row (on the CPU)."""
        h_last = np.asarray(b["h"][0, s - 1], np.float32)
        return self.tables.predict @ h_last

    def decoder(
        self,
        phones: np.ndarray,
        bert: np.ndarray,
        prompt: np.ndarray,
        tokens: int,
        kv_len: int | None = None,
    ) -> tuple[np.ndarray, KvGraph, loop.Feed]:
        """Prefill, then the bucket for ``tokens`` more positions (or the
        ``kv_len`` one): the prefill's logits, the bucket, the step on a token."""
        n_y = len(prompt)
        s = len(phones) + n_y
        self.check_fits(len(phones), n_y, tokens)
        write = self._prompt(phones, bert, prompt)
        b, bucket = self.stack.open(s, s + tokens, write, kv_len)
        return self._logits(b, s), bucket, self._feed(bucket, n_y)

    def _feed(self, bucket: KvGraph, n_y: int) -> loop.Feed:
        """Decode step idx feeds generated token idx at audio position n_y + idx
        (docs/gpt-sovits.md, T2S)."""
        emb, pe = self.tables.audio_emb, self.tables.audio_pe
        x, out = bucket.buffers["x"][0, 0], bucket.buffers["logits"][0]
        idx = 0

        def step(token: int) -> np.ndarray:
            nonlocal idx
            np.add(emb[token], pe[n_y + idx], out=x)
            bucket.step()
            idx += 1
            return out

        return self.stack.feed(bucket, step)

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
        self.check_fits(len(phones), len(prompt), max_tokens)
        if cancel is not None:
            cancel.check()
        logits, _, feed = self.decoder(phones, bert, prompt, max_tokens)
        # One extra sample past the cap tells a segment that ends exactly at
        # the cap from one that is cut.  Keeping the first max_tokens of the
        # max_tokens + 1 draws is upstream's default path at its cap
        # (infer_panel_batch_infer, parallel_infer=True: y[:-1], the LAST token
        # dropped); its naive path (streaming modes) drops the FIRST instead
        # (TTS.py's pred[-idx:]).  docs/gpt-sovits.md, T2S stopping; test_t2s.py.
        run = loop.free_run(logits, sampler.step, feed, max_tokens + 1, cancel)
        return T2SResult(np.array(run.tokens[:max_tokens], np.int64), run.limited)

    def teacher_forced(
        self,
        phones: np.ndarray,
        bert: np.ndarray,
        prompt: np.ndarray,
        tokens: np.ndarray,
        kv_len: int | None = None,
    ) -> np.ndarray:
        """Logits [1 + len(tokens), V] of the prefill and of one decode step per
        given token, in the smallest bucket that fits or the ``kv_len`` one
        (parity gates against the upstream algorithm)."""
        logits, _, feed = self.decoder(phones, bert, prompt, len(tokens), kv_len)
        return loop.teacher_forced(logits, feed, tokens)

    def warmup(self) -> None:
        """One prefill and one step of every decode bucket."""
        phones, prompt = np.zeros(1, np.int64), np.zeros(1, np.int64)
        bert = np.zeros((1, self.p.bert_dim), np.float32)
        _, k, v = self.prefill(phones, bert, prompt)
        t = self.tables
        for bucket in self.buckets.values():
            bucket.start(k, v, 2)
            np.add(t.audio_emb[0], t.audio_pe[1], out=bucket.buffers["x"][0, 0])
            bucket.step()
