"""g2pW resolver on a tiny synthetic model (tables + head + a numpy body)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from daemon.engines.gptsovits.frontend import (
    CharVocab,
    G2pwHead,
    G2pwResolver,
    G2pwTables,
    TextFrontend,
)
from daemon.engines.gptsovits.frontend.zh.g2pw import (
    BODY_INPUTS,
    G2PW_ROWS,
    G2PW_TOKENS,
    PROB_EPS,
    window_tokens,
)
from daemon.sdk.cancel import Cancelled
from tests.cancel_after import CancelAfter

HIDDEN = 16
N_POS = 11  # g2pW POS tags: UNK A C D I N P T V DE SHI
POLYPHONIC = [
    ("行", "ㄒㄧㄥ2"),
    ("行", "ㄏㄤ2"),
    ("長", "ㄔㄤ2"),
    ("長", "ㄓㄤ3"),
    ("了", "ㄌㄜ5"),
    ("了", "ㄌㄧㄠ3"),
    ("和", "ㄏㄜ2"),
    ("和", "ㄏㄨㄛ4"),
]
# A deliberately odd monophonic reading shows that the table wins over pypinyin.
MONOPHONIC = [("他", "ㄊㄚ3"), ("似", "ㄙ4")]
BOPOMOFO = {
    "ㄒㄧㄥ": "xing",
    "ㄏㄤ": "hang",
    "ㄔㄤ": "chang",
    "ㄓㄤ": "zhang",
    "ㄌㄜ": "le",
    "ㄌㄧㄠ": "liao",
    "ㄏㄜ": "he",
    "ㄏㄨㄛ": "huo",
    "ㄊㄚ": "ta",
    "ㄙ": "si",
}
VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    *"你我他們行長了和來大人在路上走很好,.!?",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("g2pw")
    (root / "POLYPHONIC_CHARS.txt").write_text(
        "\n".join(f"{c}\t{b}" for c, b in POLYPHONIC), encoding="utf-8"
    )
    (root / "MONOPHONIC_CHARS.txt").write_text(
        "\n".join(f"{c}\t{b}" for c, b in MONOPHONIC), encoding="utf-8"
    )
    (root / "bopomofo_to_pinyin_wo_tune_dict.json").write_text(
        json.dumps(BOPOMOFO, ensure_ascii=False), encoding="utf-8"
    )
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def tables(model_dir: Path) -> G2pwTables:
    return G2pwTables.from_dir(model_dir)


def make_head(tables: G2pwTables, seed: int = 0, favour: str | None = None) -> G2pwHead:
    rng = np.random.default_rng(seed)
    n_chars, n_labels = tables.label_mask.shape
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    cls_b = f32(n_labels)
    if favour is not None:  # make one reading win wherever it is allowed
        cls_b[tables.labels.index(favour)] += 50.0
    return G2pwHead(
        pos_w=f32(N_POS, HIDDEN),
        pos_b=f32(N_POS),
        cls_w=f32(n_labels, HIDDEN),
        cls_b=cls_b,
        desc_bias=f32(1, n_labels),
        char_desc=f32(n_chars, n_labels),
        second_order=f32(n_chars * N_POS, n_labels),
    )


class NumpyBody:
    """A deterministic stand-in for the BERT body: embedding of the query token
    plus the mean of the attended tokens; records every call's feeds."""

    def __init__(self, vocab_size: int) -> None:
        self.table = np.random.default_rng(1).standard_normal((vocab_size, HIDDEN))
        self.calls: list[dict[str, np.ndarray]] = []

    def __call__(self, feeds):
        self.calls.append({k: v.copy() for k, v in feeds.items()})
        ids, mask, pos = (
            feeds["input_ids"],
            feeds["attention_mask"],
            feeds["position_ids"],
        )
        emb = self.table[ids]
        mean = (emb * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (emb[np.arange(len(pos)), pos] + mean).astype(np.float32)


def torch_reference(head: G2pwHead, hidden, char_ids, mask) -> np.ndarray:
    """g2pW module.py forward (conditional, affect_location 'softmax', POS joint)."""
    torch = pytest.importorskip("torch")
    h = torch.from_numpy(np.asarray(hidden, np.float32))
    chars = torch.from_numpy(np.asarray(char_ids, np.int64))
    pos = (h @ torch.from_numpy(head.pos_w).T + torch.from_numpy(head.pos_b)).argmax(-1)
    affect = (
        torch.from_numpy(head.desc_bias)[torch.zeros_like(chars)]
        + torch.from_numpy(np.asarray(head.char_desc))[chars]
        + torch.from_numpy(np.asarray(head.second_order))[chars * N_POS + pos]
    )
    weights = torch.from_numpy(mask) * torch.sigmoid(affect)
    logits = h @ torch.from_numpy(head.cls_w).T + torch.from_numpy(head.cls_b)
    e = torch.exp(logits - logits.max(-1, keepdim=True).values) * weights
    return torch.clamp(e / e.sum(-1, keepdim=True), min=1e-6, max=1 - 1e-6).numpy()


def test_tables_follow_upstream_label_order(tables: G2pwTables) -> None:
    assert list(tables.labels) == sorted({b for _, b in POLYPHONIC})
    assert sorted(tables.char_ids) == sorted({c for c, _ in POLYPHONIC})
    row = tables.label_mask[tables.char_ids["行"]]
    allowed = {tables.labels[i] for i in np.flatnonzero(row)}
    assert allowed == {"ㄒㄧㄥ2", "ㄏㄤ2"}
    assert "似" not in tables.monophonic  # upstream's non_monophonic exclusion
    assert tables.to_pinyin("ㄏㄤ2") == "hang2" and tables.to_pinyin("ㄅㄚ1") is None


def test_head_matches_torch_reference_of_g2pw(tables: G2pwTables) -> None:
    head = make_head(tables)
    rng = np.random.default_rng(2)
    chars = rng.integers(0, len(tables.char_ids), 32)
    hidden = rng.standard_normal((32, HIDDEN)).astype(np.float32) * 3
    mask = tables.label_mask[chars]
    probs = head(hidden, chars, mask)
    assert probs.dtype == np.float32
    np.testing.assert_allclose(
        probs, torch_reference(head, hidden, chars, mask), atol=2e-6
    )
    assert np.all(probs[mask == 0] == np.float32(PROB_EPS))  # disallowed -> clip floor
    np.testing.assert_allclose((probs * mask).sum(-1), 1.0, atol=1e-4)


def test_batches_are_static_int32_and_pad_with_a_real_row(
    tables: G2pwTables, model_dir: Path
) -> None:
    vocab = CharVocab(model_dir / "vocab.txt")
    resolver = G2pwResolver(tables, vocab, make_head(tables), NumpyBody(len(VOCAB)))
    sentences = ["他行了,很好.", "行了行了行了行了行了."]  # 2 + 10 queries
    _, queries = resolver.queries(sentences)
    assert len(queries) == 12
    batches = list(resolver.batches(queries))
    assert [len(b.queries) for b in batches] == [8, 4]
    for batch in batches:
        assert set(batch.feeds) == set(BODY_INPUTS)
        for name in BODY_INPUTS:
            assert batch.feeds[name].dtype == np.int32
        assert batch.feeds["input_ids"].shape == (G2PW_ROWS, G2PW_TOKENS)
        assert batch.feeds["position_ids"].shape == (G2PW_ROWS,)
        assert not batch.feeds["token_type_ids"].any()
        ids, pos = batch.feeds["input_ids"], batch.feeds["position_ids"]
        for r, q in enumerate(batch.queries):
            n = len(q.token_ids)
            assert ids[r, 0] == vocab.cls and ids[r, n - 1] == vocab.sep
            assert batch.feeds["attention_mask"][r].tolist() == [1] * n + [0] * (64 - n)
            query_char = sentences[q.sentence][q.index]
            assert ids[r, pos[r]] == vocab.ids[query_char]
        for r in range(len(batch.queries), G2PW_ROWS):  # padding repeats row 0
            assert (ids[r] == ids[0]).all() and pos[r] == pos[0]


def test_long_context_is_windowed_around_the_query() -> None:
    ids = list(range(100, 200))  # 100 tokens, more than 62
    for query in (0, 10, 50, 99):
        tokens, position = window_tokens(ids, query, cls=2, sep=3)
        assert len(tokens) == G2PW_TOKENS and tokens[0] == 2 and tokens[-1] == 3
        assert tokens[position] == ids[query]
    short, position = window_tokens(ids[:5], 3, cls=2, sep=3)
    assert short == [2, 100, 101, 102, 103, 104, 3] and position == 4


def test_resolver_readings_reach_the_phones(
    tables: G2pwTables, model_dir: Path
) -> None:
    vocab = CharVocab(model_dir / "vocab.txt")
    body = NumpyBody(len(VOCAB))
    # Favour ㄏㄤ2: 行 reads hang2 (pypinyin says xing2); 了 cannot take it.
    head = make_head(tables, favour="ㄏㄤ2")
    with_model = TextFrontend(resolver=G2pwResolver(tables, vocab, head, body))
    without = TextFrontend()
    text = "他很行。"  # no dictionary word covers this 行
    got, plain = with_model.phonemize(text), without.phonemize(text)
    assert body.calls, "the g2pw body was never called"
    i = got.norm_text.index("行")
    assert got.phones[2 * i : 2 * i + 2] == ("h", "ang2")
    assert plain.phones[2 * i : 2 * i + 2] == ("x", "ing2")
    assert got.phones[:2] == ("t", "a3")  # monophonic table beats pypinyin's ta1
    assert plain.phones[:2] == ("t", "a1")


def test_cancel_passed_to_phonemize_stops_before_the_next_body_call(
    tables: G2pwTables, model_dir: Path
) -> None:
    vocab = CharVocab(model_dir / "vocab.txt")
    body = NumpyBody(len(VOCAB))
    frontend = TextFrontend(
        resolver=G2pwResolver(tables, vocab, make_head(tables), body)
    )
    text = "行了行了行了行了行了。"  # 10 queries: two body calls of 8 rows
    token = CancelAfter(2)
    with pytest.raises(Cancelled, match="test"):
        frontend.phonemize(text, cancel=token)
    assert len(body.calls) == 1 and token.checks == 2
    # nothing is left behind: the next request runs both calls, uncancelled
    assert frontend.phonemize(text).phones == frontend.phonemize(text).phones
    assert len(body.calls) == 1 + 2 * 2


def test_non_polyphonic_exclusions_are_not_queried(
    tables: G2pwTables, model_dir: Path
) -> None:
    vocab = CharVocab(model_dir / "vocab.txt")
    resolver = G2pwResolver(tables, vocab, make_head(tables), NumpyBody(len(VOCAB)))
    readings, queries = resolver.queries(["你和我来了"])
    assert [q.index for q in queries] == [4]
    assert readings[0][1] == "he2" and readings[0][4] is None


def test_mismatched_head_is_rejected(tables: G2pwTables, model_dir: Path) -> None:
    head = make_head(tables)
    bad = G2pwHead(**{**head.__dict__, "char_desc": head.char_desc[:-1]})
    with pytest.raises(ValueError, match="do not match"):
        G2pwResolver(
            tables, CharVocab(model_dir / "vocab.txt"), bad, NumpyBody(len(VOCAB))
        )


def test_head_loads_from_npy_files(tables: G2pwTables, tmp_path: Path) -> None:
    head = make_head(tables, seed=3)
    for name, array in head.__dict__.items():
        np.save(tmp_path / f"g2pw_{name}.npy", array)
    loaded = G2pwHead.load(tmp_path)
    hidden = np.ones((2, HIDDEN), np.float32)
    chars = np.array([0, 1])
    np.testing.assert_array_equal(
        loaded(hidden, chars, tables.label_mask[chars]),
        head(hidden, chars, tables.label_mask[chars]),
    )


def test_vocab_without_special_tokens_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n你\n", encoding="utf-8")
    with pytest.raises(ValueError, match="CLS"):
        CharVocab(tmp_path / "vocab.txt")
