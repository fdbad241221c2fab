"""Logits processors one by one, and that their order is part of the model."""

from __future__ import annotations

import numpy as np

from daemon.sdk.ar.processors import (
    History,
    MinNewTokens,
    RepetitionPenalty,
    Suppress,
    Temperature,
    TopK,
    TopP,
    apply,
    gpt_sovits_chain,
    hf_chain,
    softmax,
)


def test_history_keeps_distinct_ids_in_first_seen_order() -> None:
    h = History(10, [4, 1, 4])
    h.add(7)
    h.add(1)
    h.add(0)
    assert h.ids.tolist() == [1, 4, 7, 0]
    assert h.seen.sum() == 4


def test_repetition_penalty_once_per_seen_id() -> None:
    x = np.array([2.0, -2.0, 1.0, 4.0], np.float32)
    out = RepetitionPenalty(2.0)(x, History(4, [0, 1, 1]))
    assert out is x  # in place, like upstream's scatter_
    np.testing.assert_array_equal(x, [1.0, -4.0, 1.0, 4.0])


def test_min_new_tokens_slices_a_last_eos_and_masks_any_other() -> None:
    h = History(5)
    x = np.arange(5, dtype=np.float32)
    sliced = MinNewTokens(eos=4, steps=2)(x, h)
    assert sliced.shape == (4,) and np.shares_memory(sliced, x)
    masked = MinNewTokens(eos=2, steps=2)(x.copy(), h)
    assert masked[2] == -np.inf and masked.shape == (5,)
    # the same distribution either way
    p_slice = softmax(x[:4])
    p_mask = softmax(np.where(np.arange(5) == 4, -np.inf, x))
    np.testing.assert_allclose(p_slice, p_mask[:4], rtol=1e-6)
    h.steps = 2
    assert MinNewTokens(eos=4, steps=2)(x, h).shape == (5,)


def test_suppress_ranges_but_keep() -> None:
    x = np.zeros(10, np.float32)
    Suppress(((6, 10),), keep=(8,))(x, History(10))
    assert np.isinf(x[[6, 7, 9]]).all() and x[8] == 0.0 and not np.isinf(x[:6]).any()


def test_warpers() -> None:
    h = History(6)
    x = np.array([3.0, 1.0, 2.0, 2.0, 0.0, -1.0], np.float32)
    np.testing.assert_array_equal(Temperature(0.5)(x, h), x * 2)
    assert Temperature(0.0)(x, h).max() == np.float32(3.0) / np.float32(1e-5)
    top = TopK(3)(x.copy(), h)  # ties with the 3rd value are kept
    assert np.isfinite(top).tolist() == [True, False, True, True, False, False]
    p = softmax(x)
    assert p[0] > 0.5  # the best alone crosses 0.5
    gsv = TopP(0.5)(x, h)  # drops the token that crosses p ...
    hf = TopP(0.5, keep_crossing=True)(x, h)  # ... HF keeps it
    assert np.isfinite(gsv).sum() == 1 and np.isfinite(hf).sum() == 1
    # p = .515, .19 (ids 0, 2): the cumulative .705 crosses 0.7 at id 2
    assert np.isfinite(TopP(0.7)(x, h)).tolist() == [1, 0, 0, 0, 0, 0]
    # HF sorts ascending: of the tied ids 2 and 3 the later one is the crossing
    # one (what TopPLogitsWarper keeps on this row)
    assert np.isfinite(TopP(0.7, keep_crossing=True)(x, h)).tolist() == [
        1, 0, 0, 1, 0, 0
    ]  # fmt: skip
    assert TopP(1.0)(x, h) is x


def test_min_keep_and_hf_top_p_against_transformers() -> None:
    """Beam sampling keeps at least two tokens (HF min_tokens_to_keep): top-k
    and top-p keep the second best even where p or k alone would not; HF's
    top-p is its own float32 steps, checked against TopPLogitsWarper on
    random rows."""
    import torch
    from transformers import TopKLogitsWarper, TopPLogitsWarper

    h = History(6)
    x = np.array([9.0, 1.0, 2.0, 2.0, 0.0, -1.0], np.float32)
    assert np.isfinite(TopK(1, min_keep=2)(x.copy(), h)).sum() == 3  # tie kept
    assert np.isfinite(TopP(0.5, keep_crossing=True)(x, h)).sum() == 1
    assert np.isfinite(TopP(0.5, keep_crossing=True, min_keep=2)(x, h)).sum() == 2
    rng = np.random.default_rng(0)
    for p, k in ((0.8, 30), (0.3, 5), (0.95, 2)):
        for _ in range(50):
            row = (rng.standard_normal(64) * 3).astype(np.float32)
            want = TopPLogitsWarper(p, min_tokens_to_keep=2)(
                None, torch.from_numpy(row[None])
            )
            got = TopP(p, keep_crossing=True, min_keep=2)(row, h)
            np.testing.assert_array_equal(got, want.numpy()[0])
            want = TopKLogitsWarper(k, min_tokens_to_keep=2)(
                None, torch.from_numpy(row[None])
            )
            np.testing.assert_array_equal(TopK(k, 2)(row.copy(), h), want.numpy()[0])


def test_history_copy_is_independent() -> None:
    h = History(6, [2, 4])
    h.steps = 3
    c = h.copy()
    c.add(5)
    assert h.ids.tolist() == [2, 4] and c.ids.tolist() == [2, 4, 5]
    assert not h.seen[5] and c.steps == 3


def test_processor_order_matters() -> None:
    """The same top-p and temperature keep different tokens in the two orders:
    GPT-SoVITS cuts the nucleus on the untempered logits, HF after sharpening."""
    x = np.array([2.0, 1.5, 1.0, 0.5, 0.0], np.float32)

    def kept(chain) -> list[bool]:  # type: ignore[no-untyped-def]
        return np.isfinite(apply(chain, x.copy(), History(5))).tolist()

    # untempered p = .43 .26 .16 ...: cumulative .69 then .85 > 0.8
    assert kept([TopP(0.8), Temperature(0.5), TopK(5)]) == [1, 1, 0, 0, 0]
    # tempered p = .64 .23 ...: cumulative .87 > 0.8 at the second
    assert kept([Temperature(0.5), TopP(0.8), TopK(5)]) == [1, 0, 0, 0, 0]
    knobs = {"top_k": 5, "top_p": 0.8, "temperature": 0.5, "repetition_penalty": 1.3}
    procs, warpers = gpt_sovits_chain(**knobs, eos=4, eos_block_steps=11)
    assert [type(p) for p in procs] == [MinNewTokens, RepetitionPenalty]
    assert [type(w) for w in warpers] == [TopP, Temperature, TopK]
    suppress = Suppress(((3, 5),), keep=(4,))
    procs, warpers = hf_chain(**knobs, eos=4, min_new_tokens=2, suppress=suppress)
    assert [type(p) for p in procs] == [RepetitionPenalty, MinNewTokens, Suppress]
    assert [type(w) for w in warpers] == [Temperature, TopK, TopP]
    assert warpers[-1].keep_crossing
