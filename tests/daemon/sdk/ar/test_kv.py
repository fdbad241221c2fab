"""KV caches bound into a real decode graph (onnxruntime CPU; the simulator for
the zero-copy binding): in-place writes at pos, stale rows, bucket switches."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.ar.kv import CapacityError, KvBuckets, KvGraph
from tests.daemon.sdk.ar.conftest import BUCKETS, MASK_VALUE, decode_io


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _buckets(runners) -> KvBuckets:  # type: ignore[no-untyped-def]
    return KvBuckets(
        {n: KvGraph(r, decode_io(n), n, MASK_VALUE) for n, r in runners.items()}
    )


def _prefill(filled: int, length: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Random k, v rows standing in for a prefill's output."""
    rng = np.random.default_rng(seed)
    shape = decode_io(length)["k_cache"]
    return tuple(rng.standard_normal(shape).astype(np.float32) for _ in range(2))


def _steps(bucket: KvGraph, emb: np.ndarray, tokens) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    out = []
    for t in tokens:
        bucket.buffers["x"][0, 0] = emb[t]
        bucket.step()
        out.append(bucket.buffers["logits"][0].copy())
    return out


def test_write_at_pos_is_in_place(cpu_runners, embeddings) -> None:  # type: ignore[no-untyped-def]
    bucket = _buckets(cpu_runners)[8]
    k, v = _prefill(3, 8)
    bucket.start(k, v, 3)
    k_before, v_before, mask_before = bucket.k, bucket.v, bucket.mask
    addresses = [_address(a) for a in (k_before, v_before, mask_before)]
    new_k = np.full((1, 2, 1, 8), 7.0, np.float32)
    bucket.write(3, new_k, new_k + 1)
    assert bucket.k is k_before and bucket.v is v_before and bucket.mask is mask_before
    assert [_address(a) for a in (bucket.k, bucket.v, bucket.mask)] == addresses
    np.testing.assert_array_equal(bucket.k[:, :, 3], new_k[:, :, 0])
    np.testing.assert_array_equal(bucket.v[:, :, 3], new_k[:, :, 0] + 1)
    np.testing.assert_array_equal(bucket.k[:, :, :3], k[:, :, :3])
    assert bucket.filled == 4
    np.testing.assert_array_equal(bucket.mask[0, 0, 0], [0.0] * 4 + [MASK_VALUE] * 4)


def test_a_step_appends_its_own_kv_and_the_graph_reads_the_bound_caches(
    cpu_runners, embeddings
) -> None:  # type: ignore[no-untyped-def]
    """Bound steps equal explicit feeds: what was written at pos is what the
    next step attends to."""
    bucket = _buckets(cpu_runners)[8]
    k, v = _prefill(2, 8)
    bucket.start(k, v, 2)
    got = _steps(bucket, embeddings, [1, 5, 9])
    runner = cpu_runners[8]
    kc, vc = k.copy(), v.copy()
    kc[:, :, 2:], vc[:, :, 2:] = 0, 0
    for i, t in enumerate([1, 5, 9]):
        pos = 2 + i
        mask = np.full((1, 1, 1, 8), MASK_VALUE, np.float32)
        mask[..., :pos] = 0
        feeds = {"x": embeddings[t][None, None], "k_cache": kc, "v_cache": vc}
        logits, k_new, v_new = runner.run({**feeds, "mask": mask})
        np.testing.assert_array_equal(got[i], logits[0])
        kc[:, :, pos], vc[:, :, pos] = k_new[:, :, 0], v_new[:, :, 0]
    np.testing.assert_array_equal(bucket.k, kc)
    assert bucket.filled == 5


def test_start_clears_what_an_earlier_request_left(cpu_runners, embeddings) -> None:  # type: ignore[no-untyped-def]
    bucket = _buckets(cpu_runners)[8]
    k, v = _prefill(6, 8)
    bucket.start(k, v, 6)
    _steps(bucket, embeddings, [3])
    bucket.start(k, v, 2)
    assert bucket.filled == 2
    assert not bucket.k[:, :, 2:].any() and not bucket.v[:, :, 2:].any()
    np.testing.assert_array_equal(bucket.mask[0, 0, 0, 2:], MASK_VALUE)


def test_bucket_switch_keeps_contents(cpu_runners, embeddings) -> None:  # type: ignore[no-untyped-def]
    """A request that outgrows its bucket moves to a larger one mid-decode and
    continues as if it had started there."""
    buckets = _buckets(cpu_runners)
    small = buckets.for_positions(6)
    assert small.length == 8
    k, v = _prefill(4, 8)
    small.start(k, v, 4)
    _steps(small, embeddings, [2, 4, 6, 8])  # filled 8: full
    with pytest.raises(CapacityError, match="is full"):
        small.step()
    big = buckets.grow(small, 10)
    assert big.length == 16 and big is not small and big.filled == 8
    np.testing.assert_array_equal(big.k[:, :, :8], small.k)
    np.testing.assert_array_equal(big.v[:, :, :8], small.v)
    assert not big.k[:, :, 8:].any()
    np.testing.assert_array_equal(big.mask[0, 0, 0], [0.0] * 8 + [MASK_VALUE] * 8)
    after_switch = _steps(big, embeddings, [1, 3])
    # the same decode, started in the large bucket
    fresh = _buckets(cpu_runners)[16]
    k16, v16 = np.zeros_like(big.k), np.zeros_like(big.v)
    k16[:, :, :4], v16[:, :, :4] = k[:, :, :4], v[:, :, :4]
    fresh.start(k16, v16, 4)
    straight = _steps(fresh, embeddings, [2, 4, 6, 8, 1, 3])[4:]
    for a, b in zip(after_switch, straight, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # L differs
    assert buckets.grow(big, 12) is big


def test_smallest_bucket_that_fits(cpu_runners) -> None:  # type: ignore[no-untyped-def]
    buckets = _buckets(cpu_runners)
    assert [buckets.for_positions(n).length for n in (1, 8, 9, 16)] == [8, 8, 16, 16]
    with pytest.raises(CapacityError, match="exceed the largest bucket 16"):
        buckets.for_positions(17)
    assert tuple(buckets) == BUCKETS and len(buckets) == 2


@pytest.mark.simulator
def test_caches_are_bound_zero_copy_on_qnn(decode_onnx, qnn_cache, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """On qnnrt the graph holds the very arrays the cache writes into."""
    from scripts.common.build.runners import Simulator
    from scripts.common.qnn_compile import compile_onnx

    binary = compile_onnx(decode_onnx[8], tmp_path, cache_dir=qnn_cache).bin_path
    sim = Simulator()
    try:
        runner = sim.runner(binary, "decode_8")
        bucket = KvGraph(runner, decode_io(8), 8, MASK_VALUE)
        dtype = bucket.k.dtype
        k, v = (a.astype(dtype) for a in _prefill(2, 8))
        bucket.start(k, v, 2)
        bucket.buffers["x"][0, 0] = 1.0
        bucket.step()
        bucket.write(3, bucket.buffers["k_new"], bucket.buffers["v_new"])
        for name, arr in (("k_cache", bucket.k), ("v_cache", bucket.v),
                          ("mask", bucket.mask)):  # fmt: skip
            bound = runner.graph.bound(name)
            assert bound is arr and np.shares_memory(bound, arr), name
        assert np.shares_memory(runner.graph.bound("k_new"), bucket.buffers["k_new"])
        np.testing.assert_array_equal(bucket.k[:, :, 2], bucket.k[:, :, 3])
    finally:
        sim.close()


def test_reorder_moves_only_the_beams_whose_source_changes(cpu_runners) -> None:  # type: ignore[no-untyped-def]
    """Beam search's cache reorder, on the filled rows along the beam axis (a
    bound [layers, beams, heads, L, dh] cache is modelled by the heads axis of
    the tiny graph's [1, heads, L, dh])."""
    bucket = _buckets(cpu_runners)[8]
    k, v = _prefill(5, 8)
    bucket.start(k, v, 5)
    before_k, before_v = bucket.k.copy(), bucket.v.copy()
    address = _address(bucket.k)
    bucket.reorder(np.array([0, 1]), axis=1)  # identity: nothing moves
    np.testing.assert_array_equal(bucket.k, before_k)
    bucket.reorder(np.array([1, 0]), axis=1)  # a swap reads the old rows
    np.testing.assert_array_equal(bucket.k[:, [1, 0], :5], before_k[:, :, :5])
    np.testing.assert_array_equal(bucket.v[:, [1, 0], :5], before_v[:, :, :5])
    bucket.reorder(np.array([1, 1]), axis=1)  # a fork
    np.testing.assert_array_equal(bucket.k[:, 0, :5], bucket.k[:, 1, :5])
    np.testing.assert_array_equal(bucket.k[:, :, 5:], 0)  # past ``filled``: untouched
    assert _address(bucket.k) == address
