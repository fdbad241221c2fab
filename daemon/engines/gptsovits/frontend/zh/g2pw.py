"""g2pW polyphone resolver: input preparation, static batching and the numpy head.

The g2pW model (upstream text/g2pw/onnx_api.py + g2pW's module.py) is a BERT body
followed by a small head. The body runs as the static ``g2pw`` graph on any backend
(8 rows x 64 tokens in, hidden state of each row's query char out); the head runs
here in fp32: fp16 flips the POS argmax on near-ties and underflows the masked
softmax (docs/board.md, reference port CPU side).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.gptsovits.frontend.vocab import CharVocab
from daemon.engines.gptsovits.frontend.zh.normalize import to_simplified
from daemon.engines.gptsovits.frontend.zh.polyphone import pypinyin_readings

if TYPE_CHECKING:
    from daemon.sdk.cancel import CancelToken

log = logging.getLogger(__name__)

# Static graph shape, as the reference port compiles it (g2pw_B8_S64).
G2PW_ROWS = 8
G2PW_TOKENS = 64
# Upstream default g2pw_polyphonic_context_chars: chars kept around polyphones.
CONTEXT_CHARS = 16
# Weighted-softmax clip of g2pW's module.py (_weighted_softmax eps).
PROB_EPS = 1e-6
# Chars upstream never sends to the model although they are in its list.
NON_POLYPHONIC = frozenset("一不和咋嗲剖差攢倒難奔勁拗肖瘙誒泊听噢")
NON_MONOPHONIC = frozenset("似攢")
BODY_INPUTS = ("input_ids", "token_type_ids", "attention_mask", "position_ids")
HEAD_FILES = (
    "pos_w",
    "pos_b",
    "cls_w",
    "cls_b",
    "desc_bias",
    "char_desc",
    "second_order",
)

# feeds by graph input name (int32, BODY_INPUTS) -> hidden [G2PW_ROWS, H] float32
G2pwBody = Callable[[Mapping[str, np.ndarray]], np.ndarray]


def _tab_rows(path: Path) -> list[list[str]]:
    text = path.read_text(encoding="utf-8").strip()
    return [line.split("\t") for line in text.split("\n")]


@dataclass(frozen=True)
class G2pwTables:
    """Label and char tables of a g2pW model (the bundle's ``text/`` files)."""

    labels: tuple[str, ...]  # bopomofo + tone digit, sorted (model output order)
    char_ids: Mapping[str, int]  # polyphonic char -> row of the descriptor tables
    label_mask: np.ndarray  # [n_chars, n_labels] float32, 1 = allowed reading
    monophonic: Mapping[str, str]  # char -> bopomofo reading
    bopomofo_to_pinyin: Mapping[str, str]  # toneless bopomofo -> toneless pinyin

    @classmethod
    def from_dir(cls, path: str | Path) -> G2pwTables:
        root = Path(path)
        pairs = _tab_rows(root / "POLYPHONIC_CHARS.txt")
        labels = tuple(sorted({label for _, label in pairs}))
        label_index = {label: i for i, label in enumerate(labels)}
        chars = sorted({char for char, _ in pairs})
        char_ids = {char: i for i, char in enumerate(chars)}
        mask = np.zeros((len(chars), len(labels)), np.float32)
        for char, label in pairs:
            mask[char_ids[char], label_index[label]] = 1.0
        mono = {c: b for c, b in _tab_rows(root / "MONOPHONIC_CHARS.txt")}
        for char in NON_MONOPHONIC:
            mono.pop(char, None)
        with open(root / "bopomofo_to_pinyin_wo_tune_dict.json", encoding="utf-8") as f:
            bopomofo = json.load(f)
        return cls(labels, char_ids, mask, mono, bopomofo)

    def to_pinyin(self, bopomofo: str) -> str | None:
        base = self.bopomofo_to_pinyin.get(bopomofo[:-1])
        return base + bopomofo[-1] if base else None


@dataclass(frozen=True)
class G2pwHead:
    """Output head of g2pW (POS classifier, descriptors, phoneme classifier)."""

    pos_w: np.ndarray  # [n_pos, H]
    pos_b: np.ndarray  # [n_pos]
    cls_w: np.ndarray  # [n_labels, H]
    cls_b: np.ndarray  # [n_labels]
    desc_bias: np.ndarray  # [1, n_labels]
    char_desc: np.ndarray  # [n_chars, n_labels]
    second_order: np.ndarray  # [n_chars * n_pos, n_labels]

    @classmethod
    def load(cls, directory: str | Path, prefix: str = "g2pw_") -> G2pwHead:
        """Read ``<prefix><name>.npy`` files; the big descriptor tables are mmapped."""
        root = Path(directory)
        arrays = {}
        for name in HEAD_FILES:
            path = root / f"{prefix}{name}.npy"
            big = name in ("char_desc", "second_order")
            arrays[name] = np.load(path, mmap_mode="r") if big else np.load(path)
        return cls(**arrays)

    def __call__(
        self, hidden: np.ndarray, char_ids: np.ndarray, label_mask: np.ndarray
    ) -> np.ndarray:
        """Probabilities [n, n_labels] from query-char hidden states [n, H]."""
        h = np.asarray(hidden, np.float32)
        n_pos = self.pos_w.shape[0]
        pos = np.argmax(h @ self.pos_w.T + self.pos_b, axis=-1)
        chars = np.asarray(char_ids, np.int64)
        desc = (
            np.asarray(self.desc_bias, np.float32).reshape(1, -1)
            + self.char_desc[chars]
            + self.second_order[chars * n_pos + pos]
        )
        weights = label_mask / (1.0 + np.exp(-desc))
        logits = h @ self.cls_w.T + self.cls_b
        scaled = np.exp(logits - logits.max(axis=-1, keepdims=True)) * weights
        probs = scaled / scaled.sum(axis=-1, keepdims=True)
        return np.clip(probs, PROB_EPS, 1.0 - PROB_EPS).astype(np.float32)


@dataclass(frozen=True)
class Query:
    sentence: int  # index of the sentence
    index: int  # char index in the sentence
    token_ids: tuple[int, ...]  # [CLS] ... [SEP], at most G2PW_TOKENS
    position: int  # token index of the queried char
    char_id: int


@dataclass(frozen=True)
class Batch:
    feeds: dict[str, np.ndarray]  # BODY_INPUTS, int32
    queries: tuple[Query, ...]  # real rows; rows after them repeat the first row


def window_tokens(
    ids: Sequence[int], query: int, cls: int, sep: int
) -> tuple[list[int], int]:
    """[CLS]+ids+[SEP] if it fits, else a window of ids around the query token."""
    room = G2PW_TOKENS - 2
    start = 0
    if len(ids) > room:
        start = min(max(0, query - room // 2), len(ids) - room)
    window = list(ids[start : start + room])
    return [cls, *window, sep], query - start + 1


class G2pwResolver:
    """PolyphoneResolver backed by the g2pW body graph and the numpy head."""

    def __init__(
        self,
        tables: G2pwTables,
        vocab: CharVocab,
        head: G2pwHead,
        body: G2pwBody,
        to_traditional: Callable[[str], str] | None = None,
    ) -> None:
        if head.char_desc.shape != tables.label_mask.shape:
            raise ValueError(
                f"g2pw head tables {head.char_desc.shape} do not match the char/label "
                f"tables {tables.label_mask.shape}"
            )
        self.tables, self.vocab, self.head, self.body = tables, vocab, head, body
        self._to_traditional = to_traditional or _opencc_s2tw()
        self._polyphonic = frozenset(tables.char_ids) - NON_POLYPHONIC

    def queries(
        self, sentences: Sequence[str]
    ) -> tuple[list[list[str | None]], list[Query]]:
        """Readings known without the model, and the model queries for the rest."""
        readings: list[list[str | None]] = []
        queries: list[Query] = []
        for s_idx, sentence in enumerate(sentences):
            trad = self._to_traditional(sentence)
            if len(trad) != len(sentence):
                log.warning("s2tw changed the length of %r; using it as is", sentence)
                trad = sentence
            base = pypinyin_readings(to_simplified(trad))
            row: list[str | None] = []
            poly = []
            for i, char in enumerate(trad):
                if char in self._polyphonic:
                    poly.append(i)
                    row.append(None)
                elif char in self.tables.monophonic:
                    row.append(self.tables.to_pinyin(self.tables.monophonic[char]))
                else:
                    row.append(base[i])
            readings.append(row)
            if poly:
                left = max(0, poly[0] - CONTEXT_CHARS)
                right = min(len(trad), poly[-1] + CONTEXT_CHARS + 1)
                ids = self.vocab.encode(trad[left:right])
                for i in poly:
                    tokens, position = window_tokens(
                        ids, i - left, self.vocab.cls, self.vocab.sep
                    )
                    char_id = self.tables.char_ids[trad[i]]
                    queries.append(Query(s_idx, i, tuple(tokens), position, char_id))
        return readings, queries

    @staticmethod
    def batches(queries: Sequence[Query]) -> Iterator[Batch]:
        """Static [G2PW_ROWS, G2PW_TOKENS] int32 feeds; padding rows repeat row 0."""
        for start in range(0, len(queries), G2PW_ROWS):
            real = tuple(queries[start : start + G2PW_ROWS])
            rows = real + (real[0],) * (G2PW_ROWS - len(real))
            ids = np.zeros((G2PW_ROWS, G2PW_TOKENS), np.int32)
            mask = np.zeros((G2PW_ROWS, G2PW_TOKENS), np.int32)
            for r, q in enumerate(rows):
                ids[r, : len(q.token_ids)] = q.token_ids
                mask[r, : len(q.token_ids)] = 1
            feeds = {
                "input_ids": ids,
                "token_type_ids": np.zeros_like(ids),
                "attention_mask": mask,
                "position_ids": np.array([q.position for q in rows], np.int32),
            }
            yield Batch(feeds, real)

    def resolve(
        self, sentences: Sequence[str], cancel: CancelToken | None = None
    ) -> list[list[str | None]]:
        readings, queries = self.queries(sentences)
        for batch in self.batches(queries):
            if cancel is not None:
                cancel.check()
            hidden = np.asarray(self.body(batch.feeds))[: len(batch.queries)]
            chars = np.array([q.char_id for q in batch.queries], np.int64)
            probs = self.head(hidden, chars, self.tables.label_mask[chars])
            for q, label in zip(batch.queries, probs.argmax(axis=-1), strict=True):
                pinyin = self.tables.to_pinyin(self.tables.labels[int(label)])
                if pinyin is None:
                    log.warning(
                        "g2pw label %s has no pinyin", self.tables.labels[label]
                    )
                readings[q.sentence][q.index] = pinyin
        return readings


def _opencc_s2tw() -> Callable[[str], str]:
    try:
        import opencc
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "the g2pW resolver needs OpenCC (pip install opencc) to convert text to "
            "traditional characters as the model expects"
        ) from exc
    return opencc.OpenCC("s2tw").convert
