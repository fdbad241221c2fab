"""The KV stack on a real prefill and decode pair (onnxruntime CPU): the graphs
it picks, a decode that continues its prefill exactly, refusals before any
graph call, and the one account of the work."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.ar import masks
from daemon.sdk.ar.kv import CapacityError
from daemon.sdk.ar.stack import KvStack
from tests.daemon.sdk.ar.conftest import (
    BUCKETS,
    MASK_VALUE,
    PREFILLS,
    decode_io,
    prefill_io,
)


@pytest.fixture
def stack(prefill_onnx, decode_onnx) -> KvStack:  # type: ignore[no-untyped-def]
    from scripts.common.build.runners import cpu_runner

    graphs = {f"prefill_{n}": cpu_runner(p) for n, p in prefill_onnx.items()}
    graphs |= {f"decode_{n}": cpu_runner(p) for n, p in decode_onnx.items()}
    prefill = (lambda n: f"prefill_{n}", prefill_io)
    decode = (lambda n: f"decode_{n}", decode_io)
    return KvStack(graphs, prefill, PREFILLS, decode, BUCKETS, MASK_VALUE, "row")


def _writer(x: np.ndarray):  # type: ignore[no-untyped-def]
    def write(b: dict[str, np.ndarray]) -> None:
        b["x"][0, : len(x)] = x
        b["x"][0, len(x) :] = 0.0
        masks.causal(b["mask"], len(x), MASK_VALUE)

    return write


def _calls(stack: KvStack) -> int:
    graphs = [*stack.prefills.values(), *stack.buckets.values()]
    return sum(g.runner.stats.calls for g in graphs)


def _decode(stack: KvStack, x: np.ndarray, tokens: list[int], emb: np.ndarray):  # type: ignore[no-untyped-def]
    """Logits of the prefill's last row, then of one decode step per token."""
    b, bucket = stack.open(len(x), len(x) + len(tokens), _writer(x))
    out = [b["logits"][0, len(x) - 1].copy()]

    def step(token: int) -> np.ndarray:
        bucket.buffers["x"][0, 0] = emb[token]
        bucket.step()
        return bucket.buffers["logits"][0]

    feed = stack.feed(bucket, step)
    out += [feed(t).copy() for t in tokens]
    return np.stack(out), bucket


def test_a_decode_continues_its_prefill_exactly(stack, embeddings) -> None:  # type: ignore[no-untyped-def]
    """Prefill 3 rows, decode 4 tokens: the logits of one prefill of all 7 rows
    (the caches were moved into the bucket whole, and nothing else)."""
    tokens = [5, 1, 17, 9]
    got, bucket = _decode(stack, embeddings[[2, 7, 11]], tokens, embeddings)
    assert bucket.length == 8 and bucket.filled == 7
    whole = embeddings[[2, 7, 11, *tokens]]
    b = stack.run_prefill(len(whole), _writer(whole))
    want = b["logits"][0, 2 : len(whole)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_smallest_graphs_that_hold_the_request_run(stack, embeddings) -> None:  # type: ignore[no-untyped-def]
    assert [stack.prefill_graph(n) is stack.prefills[s]
            for n, s in ((1, 4), (4, 4), (5, 8), (8, 8))] == [True] * 4  # fmt: skip
    _, bucket = stack.open(3, 3 + 6, _writer(embeddings[:3]))
    assert bucket.length == 16
    assert stack.prefills[4].runner.stats.calls == 1
    assert stack.prefills[8].runner.stats.calls == 0
    assert stack.bucket_for(9, kv_len=16) is stack.buckets[16]
    assert (stack.max_prompt, stack.max_positions) == (8, 16)


def test_what_does_not_fit_is_refused_before_any_graph_runs(stack, embeddings) -> None:  # type: ignore[no-untyped-def]
    x = embeddings[:3]
    with pytest.raises(CapacityError, match="a 9-row prompt exceeds the largest "
                       "prefill bucket 8"):  # fmt: skip
        # the prompt is named first, however many tokens were to follow it
        stack.open(9, 17, _writer(np.zeros((9, x.shape[1]), np.float32)))
    with pytest.raises(CapacityError, match="17 KV positions exceed the largest"):
        stack.open(3, 17, _writer(x))
    with pytest.raises(CapacityError, match="9 positions exceed bucket 8"):
        stack.open(3, 9, _writer(x), kv_len=8)
    assert _calls(stack) == 0 and stack.stats.runs == 0


def test_one_account_of_prefills_runs_and_steps(stack, embeddings) -> None:  # type: ignore[no-untyped-def]
    stats = stack.stats
    stats.host_steps = []
    _decode(stack, embeddings[:3], [1, 2], embeddings)
    _decode(stack, embeddings[:2], [3, 4, 5, 6, 7, 8, 9, 10], embeddings)
    assert (stats.runs, stats.by_bucket, stats.steps) == (2, {8: 1, 16: 1}, 10)
    assert stats.prefill_seconds > 0 and stats.step_seconds > stats.graph_seconds > 0
    assert len(stats.host_steps) == 10 and min(stats.host_steps) > 0
    mean = (stats.step_seconds - stats.graph_seconds) / 10
    assert stats.host_seconds_per_step == pytest.approx(mean)
    stats.reset()
    assert (stats.runs, stats.by_bucket, stats.steps) == (0, {}, 0)
    assert stats.host_steps == []  # still on, emptied
    assert stats.step_seconds == stats.graph_seconds == stats.prefill_seconds == 0
