"""Semantic codes from the GPT graphs, by upstream's beam sampling.

``infer_v2.infer`` calls ``inference_speech`` with ``do_sample=True,
num_beams=3, top_p=0.8, top_k=30, temperature=0.8, repetition_penalty=10.0,
length_penalty=0.0`` and at most ``max_mel_tokens=1500`` new tokens;
transformers runs that as beam sampling (daemon/sdk/ar/beams.py). The prompt
transformers sees is ``n`` fake ids of 1 and the start mel token, so the
repetition penalty also lowers code 1 and the start token from the first step.

The prompt rows go through the smallest prefill graph that holds them; its K/V
fill every beam's rows of the smallest decode bucket that holds the prompt and
one token, and the beams move to a larger bucket when that one fills.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
from daemon.sdk.ar.beams import BeamSearch, BeamSettings, Noise
from daemon.sdk.ar.kv import KvGraph
from daemon.sdk.ar.loop import Checkpoint
from daemon.sdk.ar.processors import History, hf_chain
from daemon.sdk.ar.stack import KvStack
from daemon.sdk.graphs import Runner

from hexvoice_indextts.gpt.prompt import GptTables

#: The additive mask of a key a row must not see (the graphs' and the K/V
#: stack's): exp of it is 0 in float32, and, unlike float32's minimum, it is
#: an fp16 number (the HTP's precision).
MASK_VALUE: Final = -1e4

#: the fake input id ``prepare_gpt_inputs`` fills the prompt with
FAKE_PROMPT_ID: Final = 1
#: HF's min_tokens_to_keep with beams and one EOS id (``_get_logits_processor``)
BEAM_MIN_KEEP: Final = 2


@dataclass(frozen=True)
class Sampling:
    """``infer``'s generation keywords, at its defaults."""

    num_beams: int = 3
    top_p: float = 0.8
    top_k: int = 30
    temperature: float = 0.8
    repetition_penalty: float = 10.0
    length_penalty: float = 0.0
    max_mel_tokens: int = 1500


def prefill_name(rows: int) -> str:
    return f"gpt_prefill_P{rows}"


def decode_name(positions: int) -> str:
    return f"gpt_decode_L{positions}"


@dataclass(frozen=True)
class GptShape:
    """What the graphs' I/O shapes depend on."""

    layers: int
    heads: int
    width: int
    vocab: int
    beams: int

    def prefill(self, rows: int) -> dict[str, tuple[int, ...]]:
        kv = (self.layers, 1, self.heads, rows, self.width // self.heads)
        return {
            "emb": (1, rows, self.width),
            "pick": (1, rows),
            "logits": (1, self.vocab),
            "k": kv,
            "v": kv,
        }

    def decode(self, positions: int) -> dict[str, tuple[int, ...]]:
        dh = self.width // self.heads
        cache = (self.layers, self.beams, self.heads, positions, dh)
        new = (self.layers, self.beams, self.heads, 1, dh)
        return {
            "x": (self.beams, 1, self.width),
            "k_cache": cache,
            "v_cache": cache,
            "mask": (1, positions),
            "logits": (self.beams, self.vocab),
            "k_new": new,
            "v_new": new,
        }


def gpt_stack(
    graphs: Mapping[str, Runner],
    shape: GptShape,
    prefill_rows: list[int],
    decode_positions: list[int],
) -> KvStack:
    return KvStack(
        graphs,
        (prefill_name, shape.prefill),
        prefill_rows,
        (decode_name, shape.decode),
        decode_positions,
        MASK_VALUE,
        unit="row",
    )


def beam_search(tables: GptTables, sampling: Sampling, noise: Noise) -> BeamSearch:
    vocab = tables.mel.shape[0]
    processors, warpers = hf_chain(
        sampling.top_k,
        sampling.top_p,
        sampling.temperature,
        sampling.repetition_penalty,
        tables.stop_mel,
        min_keep=BEAM_MIN_KEEP,
    )
    settings = BeamSettings(
        sampling.num_beams,
        tables.stop_mel,
        sampling.max_mel_tokens,
        sampling.length_penalty,
    )
    history = History(vocab, [FAKE_PROMPT_ID, tables.start_mel])
    return BeamSearch(settings, processors + warpers, history, noise)


class GptRun:
    """One utterance on the graphs: ``open`` the prompt, then ``step`` the
    beams; the same calls serve generation and the teacher-forced gates."""

    def __init__(self, stack: KvStack, tables: GptTables) -> None:
        self.stack, self.tables = stack, tables
        self.bucket: KvGraph | None = None
        self.generated = 0
        self._t0 = 0.0

    def open(self, prompt: np.ndarray) -> np.ndarray:
        """The prompt rows [n, d] through a prefill graph: the logits [vocab]
        of its last row (every beam's first)."""
        n = len(prompt)

        def write(b: dict[str, np.ndarray]) -> None:
            b["emb"][...] = 0.0
            b["emb"][0, :n] = prompt
            b["pick"][...] = 0.0
            b["pick"][0, n - 1] = 1.0

        out, self.bucket = self.stack.open(n, n + 1, write)
        self.generated = 0
        self._t0 = time.perf_counter()
        return out["logits"][0].copy()

    def step(self, tokens: np.ndarray, sources: np.ndarray) -> np.ndarray:
        """Row i of the caches := beam ``sources[i]``'s, then ``tokens[i]`` fed
        to it: the logits [beams, vocab] (a view, valid until the next step)."""
        assert self.bucket is not None, "open the prompt first"
        self.bucket.reorder(sources)
        bucket = self.bucket = _room(self.stack, self.bucket)
        self.generated += 1
        b = bucket.bind()
        b["x"][:, 0] = self.tables.step(tokens, self.generated)
        bucket.step()
        t1 = time.perf_counter()
        self.stack.stats.step(t1 - self._t0, bucket.graph_seconds)
        self._t0 = t1
        return b["logits"]


def generate_codes(
    run: GptRun,
    prompt: np.ndarray,
    search: BeamSearch,
    cancel: Checkpoint | None = None,
) -> list[int]:
    """The best beam's tokens for the ``prompt`` rows [n, d], its stop token
    included when it ended by one (what ``generate`` returns past the prompt)."""
    return search.run(run.open(prompt), run.step, cancel)


def teacher_forced(run: GptRun, prompt: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """float32 logits [1 + T, beams, vocab]: the prompt's (every beam's), then
    one step's per column of ``tokens`` [beams, T], each beam fed its own row."""
    first = run.open(prompt)
    beams = tokens.shape[0]
    out = [np.broadcast_to(first, (beams, first.size)).copy()]
    keep = np.arange(beams)
    for t in range(tokens.shape[1]):
        out.append(np.array(run.step(tokens[:, t], keep), np.float32))
    return np.stack(out)


def _room(stack: KvStack, bucket: KvGraph) -> KvGraph:
    """A bucket with room for one more position (the beams move when full)."""
    grown = stack.buckets.grow(bucket, bucket.filled + 1)
    if grown is not bucket:
        stack.stats.run(grown.length)
    return grown


def code_length(codes: list[int], stop: int) -> int:
    """infer_v2: the codes before the first stop token (all without one)."""
    return codes.index(stop) if stop in codes else len(codes)
