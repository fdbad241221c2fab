"""The decode loop on a real decoder graph: teacher forcing vs free running,
the token limit, cancellation between graph calls."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.ar import loop
from daemon.sdk.ar.draws import greedy
from daemon.sdk.ar.kv import KvGraph
from daemon.sdk.cancel import Cancelled, CancelToken
from tests.daemon.sdk.ar.conftest import MASK_VALUE, decode_io


def _decoder(runner, embeddings, length: int = 16):  # type: ignore[no-untyped-def]
    """(first logits, feed): a 3-position prompt, then one step per token."""
    bucket = KvGraph(runner, decode_io(length), length, MASK_VALUE)
    rng = np.random.default_rng(2)
    k, v = (rng.standard_normal(bucket.k.shape).astype(np.float32) for _ in range(2))
    bucket.start(k, v, 3)
    calls = []

    def feed(token: int) -> np.ndarray:
        bucket.buffers["x"][0, 0] = embeddings[token]
        bucket.step()
        calls.append(token)
        return bucket.buffers["logits"][0]

    first = np.linspace(-1.0, 1.0, embeddings.shape[0]).astype(np.float32)
    return first, feed, calls


def test_teacher_forcing_on_its_own_tokens_equals_the_free_run(
    cpu_runners, embeddings
) -> None:  # type: ignore[no-untyped-def]
    seen: list[np.ndarray] = []

    def choose(logits: np.ndarray) -> tuple[int, bool]:
        seen.append(np.array(logits, np.float32))
        return greedy(logits), False

    first, feed, _ = _decoder(cpu_runners[16], embeddings)
    run = loop.free_run(first, choose, feed, limit=10)
    assert run.limited and len(run.tokens) == 10
    first, feed, _ = _decoder(cpu_runners[16], embeddings)
    forced = loop.teacher_forced(first, feed, run.tokens[:-1])
    assert forced.shape == (10, embeddings.shape[0]) and forced.dtype == np.float32
    np.testing.assert_array_equal(forced, np.stack(seen))
    assert len(set(run.tokens)) > 1  # the decoder does depend on its input


def test_a_stop_ends_the_run_without_its_token(cpu_runners, embeddings) -> None:  # type: ignore[no-untyped-def]
    first, feed, calls = _decoder(cpu_runners[16], embeddings)
    choices = iter([(4, False), (7, False), (0, True)])
    run = loop.free_run(first, lambda _: next(choices), feed, limit=10)
    assert run == loop.Run([4, 7], limited=False)
    assert calls == [4, 7]  # the stop step is not fed


def test_the_last_token_at_the_limit_is_not_fed(cpu_runners, embeddings) -> None:  # type: ignore[no-untyped-def]
    first, feed, calls = _decoder(cpu_runners[16], embeddings)
    run = loop.free_run(first, lambda x: (greedy(x), False), feed, limit=3)
    assert run.limited and len(calls) == 2 and calls == run.tokens[:2]


def test_cancel_is_checked_before_every_graph_call(cpu_runners, embeddings) -> None:  # type: ignore[no-untyped-def]
    first, feed, calls = _decoder(cpu_runners[16], embeddings)
    token = CancelToken()

    def choose(logits: np.ndarray) -> tuple[int, bool]:
        if len(calls) == 2:
            token.cancel("client left")
        return greedy(logits), False

    with pytest.raises(Cancelled):
        loop.free_run(first, choose, feed, limit=10, cancel=token)
    assert len(calls) == 2
