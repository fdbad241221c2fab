"""Text glue of the engine: the frontend with the g2pw graph, BERT on the NPU.

- g2pW: the body runs as the ``g2pw`` graph (8 rows x 64 tokens -> hidden of
  each row's query char), the head in numpy fp32 (frontend/g2pw.py).
- BERT (docs/gpt-sovits.md, BERT features): for each Chinese part, its
  norm_text as [CLS] chars [SEP] through the ``bert`` graph (hidden_states[-3]),
  [CLS]/[SEP] rows dropped, each char's row repeated word2ph times; zeros for
  the phones of other languages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.frontend import (
    CharVocab,
    G2pwHead,
    G2pwResolver,
    G2pwTables,
    Phonemes,
    Segment,
    TextFrontend,
)
from daemon.engines.gptsovits.frontend.zh.g2pw import (
    BODY_INPUTS,
    G2PW_ROWS,
    G2PW_TOKENS,
)
from daemon.engines.gptsovits.layout import GsvParams
from daemon.engines.gptsovits.t2s import CapacityError
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.cancel import CancelToken

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner

#: the BERT WordPiece vocabulary inside the bundle's ``text/`` directory
VOCAB_FILE = "vocab.txt"
# Polyphonic chars of every g2pW model (upstream POLYPHONIC_CHARS.txt): warm-up
# resolves one of them so the g2pw graph and the head tables are touched.
WARMUP_POLYPHONES = "行长好看还重"


def _graph_shape(runner: Runner, name: str) -> tuple[int, ...]:
    for t in runner.inputs:
        if t.name == name:
            return tuple(t.shape)
    raise BundleError(f"graph {runner.key}: no input {name!r}")


class G2pwGraph:
    """The ``g2pw`` graph as a ``G2pwBody``: feeds by name -> hidden [rows, H]."""

    def __init__(self, runner: Runner) -> None:
        for name in BODY_INPUTS[:3]:
            if _graph_shape(runner, name) != (G2PW_ROWS, G2PW_TOKENS):
                raise BundleError(
                    f"graph {runner.key}: {name} is "
                    f"{list(_graph_shape(runner, name))}, the g2pW resolver feeds "
                    f"{[G2PW_ROWS, G2PW_TOKENS]}"
                )
        self.runner = runner

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> np.ndarray:
        # the resolver checks the request's cancel token before each call
        return np.asarray(self.runner.run(dict(feeds))[0], np.float32)


class BertGraph:
    """Phone-level BERT features from the ``bert`` graph."""

    def __init__(self, runner: Runner, vocab: CharVocab, p: GsvParams) -> None:
        self.runner, self.vocab, self.dim = runner, vocab, p.bert_dim
        self.tokens = p.bert_tokens
        want = {"input_ids": (1, self.tokens), "mask": (1, 1, 1, self.tokens)}
        for name, shape in want.items():
            if _graph_shape(runner, name) != shape:
                raise BundleError(
                    f"graph {runner.key}: {name} is "
                    f"{list(_graph_shape(runner, name))}, the engine feeds "
                    f"{list(shape)}"
                )
        out = tuple(runner.outputs[0].shape)
        if out != (1, self.tokens, self.dim):
            raise BundleError(
                f"graph {runner.key}: output {list(out)}, want "
                f"{[1, self.tokens, self.dim]}"
            )
        self._ids = np.zeros((1, self.tokens), np.int32)
        self._mask = np.zeros((1, 1, 1, self.tokens), np.float32)
        self._mask_value = np.float32(p.mask_value)

    @property
    def max_chars(self) -> int:
        return self.tokens - 2  # [CLS] and [SEP]

    def check_fits(self, phonemes: Phonemes) -> None:
        for part in phonemes.parts:
            if part.lang == "zh" and len(part.norm_text) > self.max_chars:
                raise CapacityError(
                    f"{len(part.norm_text)} chars exceed the bert graph's "
                    f"{self.max_chars}"
                )

    def hidden(self, text: str, cancel: CancelToken | None = None) -> np.ndarray:
        """hidden_states[-3] rows of the chars of ``text`` -> [len(text), dim]."""
        ids = [self.vocab.cls, *self.vocab.encode(text), self.vocab.sep]
        n = len(ids)
        if n > self.tokens:
            raise CapacityError(f"{n} BERT tokens exceed the graph's {self.tokens}")
        self._ids[0, :n] = ids
        self._ids[0, n:] = 0
        self._mask[..., :n] = 0.0
        self._mask[..., n:] = self._mask_value
        if cancel is not None:
            cancel.check()
        out = self.runner.run({"input_ids": self._ids, "mask": self._mask})[0]
        return np.asarray(out[0, 1 : n - 1], np.float32)

    def features(
        self, phonemes: Phonemes, cancel: CancelToken | None = None
    ) -> np.ndarray:
        """[n_phones, dim]: Chinese rows by word2ph, zeros elsewhere."""
        self.check_fits(phonemes)
        rows = []
        for part in phonemes.parts:
            if part.lang != "zh" or part.word2ph is None:
                rows.append(np.zeros((len(part.phones), self.dim), np.float32))
                continue
            hidden = self.hidden(part.norm_text, cancel)
            rows.append(np.repeat(hidden, part.word2ph, axis=0))
        if not rows:
            return np.zeros((0, self.dim), np.float32)
        return np.concatenate(rows)


@dataclass(frozen=True)
class TextStack:
    """The engine's one handle on text: split, phonemize, BERT features."""

    frontend: TextFrontend
    resolver: G2pwResolver
    g2pw: G2pwGraph
    bert: BertGraph

    def split(self, text: str) -> list[Segment]:
        """Segments to synthesize; ValueError for empty text."""
        return self.frontend.split(text)

    def split_in_half(self, segment: Segment) -> tuple[Segment, Segment]:
        """Halves of a segment that hit a cap; ValueError if it cannot split."""
        return self.frontend.split_in_half(segment)

    def phonemize(self, text: str, cancel: CancelToken | None = None) -> Phonemes:
        """Phones of one segment; ``cancel`` is checked before each g2pw call."""
        return self.frontend.phonemize(text, cancel)

    def check_fits(self, phonemes: Phonemes) -> None:
        """CapacityError if a Chinese part exceeds the bert graph."""
        self.bert.check_fits(phonemes)

    def bert_features(
        self, phonemes: Phonemes, cancel: CancelToken | None = None
    ) -> np.ndarray:
        """[n_phones, dim] BERT features; ``cancel`` checked before each call."""
        return self.bert.features(phonemes, cancel)

    def warmup(self) -> None:
        """jieba, pypinyin, rules, dictionaries, g2pW head tables, both graphs."""
        self.frontend.warm_up()
        self.resolver.resolve([WARMUP_POLYPHONES])
        self.bert.hidden(WARMUP_POLYPHONES[:2])


def build_text(bundle: Bundle, graphs: Mapping[str, Runner], p: GsvParams) -> TextStack:
    """The frontend (g2pW on the ``g2pw`` graph) and the BERT glue."""
    missing = [k for k in (L.G2PW, L.BERT) if k not in graphs]
    if missing:
        raise BundleError(f"gpt-sovits bundle lacks graph(s) {missing}")
    text_dir = bundle.path(L.TEXT_DIR)
    try:
        vocab = CharVocab(text_dir / VOCAB_FILE)
        tables = G2pwTables.from_dir(text_dir)
        head = G2pwHead.load(bundle.path("cpu"), L.G2PW_HEAD_PREFIX)
    except (OSError, ValueError, KeyError) as exc:
        raise BundleError(f"{bundle.root}: text resources: {exc}") from exc
    body = G2pwGraph(graphs[L.G2PW])
    resolver = G2pwResolver(tables, vocab, head, body)
    return TextStack(
        TextFrontend(resolver), resolver, body, BertGraph(graphs[L.BERT], vocab, p)
    )
