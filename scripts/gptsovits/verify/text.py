"""CPU parity gates of the two text graphs (bert, g2pw) against the originals.

- bert: the static graph (padded to T tokens, additive mask) vs transformers'
  hidden_states[-3] at the exact length cast to float64: relative error <
  max(1e-4, 1.41 x transformers' own float32 error) (scripts/common/floor.py).
- g2pw: the static body (8 rows, padded) + the numpy head vs the unsplit g2pW
  ONNX model run per query at its exact length: body relative error < 1e-4 and
  the predicted reading identical for every query. Upstream here is a float32
  ONNX file, with no float64 form to measure its own floor by: the fixed bar
  stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
from torch import nn

from daemon.engines.gptsovits.frontend import (
    CharVocab,
    G2pwHead,
    G2pwResolver,
    G2pwTables,
)
from scripts.common.floor import in_float64, rel_gate
from scripts.common.parity import rel_error
from scripts.gptsovits.export.bert import bert_inputs, reference_hidden
from scripts.gptsovits.export.g2pw import hidden_probe
from scripts.gptsovits.verify.cpu import _check, cpu_session, enforce

#: the fixed bound, widened to transformers' own float32 error where that misses it
BERT_MAX_REL_ERR = 1e-4
G2PW_MAX_REL_ERR = 1e-4
# Sentences with polyphones (the test voice's g2pW knows 行 長 好 看 還 重).
G2PW_SENTENCES = (
    "银行行长还要重新看看。",
    "你好,长城很长.",
    "我们还是重来吧!",
)
BERT_SENTENCES = ("你好,世界.", "我们一起去看一看吧!")


def gate_bert(
    bert: nn.Module, onnx_path: Path, vocab: CharVocab, tokens: int
) -> dict[str, float]:
    run = cpu_session(onnx_path)
    worst = 0.0
    for text in BERT_SENTENCES:
        ids = [vocab.cls, *vocab.encode(text), vocab.sep]
        (hidden,) = run(bert_inputs(ids, tokens))
        want = reference_hidden(bert, ids)
        with in_float64(bert):
            exact = reference_hidden(bert, ids)
        gate = rel_gate("bert", BERT_MAX_REL_ERR, exact, want, hidden[0, : len(ids)])
        worst = max(worst, enforce(gate, f"hidden_states[-3] ({len(ids)} ids)"))
    return {"bert_rel_err": worst}


def g2pw_resolver(
    g2pw_dir: Path, vocab: CharVocab, head_dir: Path, body_onnx: Path
) -> G2pwResolver:
    """The runtime's resolver over the body graph on onnxruntime CPU."""
    run = cpu_session(body_onnx)
    return G2pwResolver(
        G2pwTables.from_dir(g2pw_dir),
        vocab,
        G2pwHead.load(head_dir),
        lambda feeds: run(feeds)[0],
    )


def gate_g2pw(
    original: Path,
    resolver: G2pwResolver,
    sentences: Sequence[str] = G2PW_SENTENCES,
) -> dict[str, float]:
    probe = ort.InferenceSession(
        hidden_probe(original).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    _, queries = resolver.queries(sentences)
    if not queries:
        raise ValueError("g2pw gate: the sentences have no polyphonic chars")
    tables = resolver.tables
    worst, agree = 0.0, 0
    for batch in resolver.batches(queries):
        hidden = np.asarray(resolver.body(batch.feeds))[: len(batch.queries)]
        chars = np.array([q.char_id for q in batch.queries], np.int64)
        probs = resolver.head(hidden, chars, tables.label_mask[chars])
        for row, q in enumerate(batch.queries):
            n = len(q.token_ids)
            want_probs, want_hidden = probe.run(
                None,
                {
                    "input_ids": np.array([q.token_ids], np.int64),
                    "token_type_ids": np.zeros((1, n), np.int64),
                    "attention_mask": np.ones((1, n), np.int64),
                    "phoneme_mask": tables.label_mask[[q.char_id]],
                    "char_ids": np.array([q.char_id], np.int64),
                    "position_ids": np.array([q.position], np.int64),
                },
            )
            worst = max(worst, rel_error(want_hidden[0], hidden[row]))
            agree += int(probs[row].argmax() == want_probs[0].argmax())
    share = agree / len(queries)
    _check(
        "g2pw",
        "body relative error",
        worst,
        worst < G2PW_MAX_REL_ERR,
        f"< {G2PW_MAX_REL_ERR:g}",
    )
    _check("g2pw", "reading agreement", share, share == 1.0, "= 100 %")
    return {
        "g2pw_rel_err": worst,
        "g2pw_agreement": share,
        "g2pw_queries": len(queries),
    }
