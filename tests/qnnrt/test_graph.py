"""Graph I/O on the real x86 HTP simulator: names, order, dtypes, zero copy."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import qnnrt
from scripts.common.qnn_compile import Compiled, qnn_session

# The x86 references; a board run (-m board) collects this file without them.
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
from tests.qnnrt import tiny_models as tm  # noqa: E402

FP16_ATOL = 2e-2  # fp16 HTP math vs fp32 CPU on O(1) activations


def cpu_run(onnx_path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def multi_io_feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "a": rng.standard_normal((3, 5)).astype(np.float32),
        "c": rng.standard_normal((2, 8)).astype(np.float16),
        "ids": np.array([[3, 0, 31, 7]], np.int32),
    }


def test_run_is_bit_identical_to_onnxruntime_qnn(backend, bins: dict[str, Compiled]):
    graph = qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path).graph()
    x = np.random.default_rng(0).standard_normal((1, 64)).astype(np.float32)
    (ours,) = graph.run({"x": x})
    (theirs,) = qnn_session(bins["matmul_tanh"].ctx_onnx_path).run(None, {"x": x})
    assert ours.tobytes() == theirs.tobytes()


def test_run_matches_cpu_reference_within_fp16(backend, bins, onnx_dir: Path):
    graph = qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path).graph()
    x = np.random.default_rng(1).standard_normal((1, 64)).astype(np.float32)
    (ours,) = graph.run({"x": x})
    ref = cpu_run(onnx_dir / "matmul_tanh.onnx", {"x": x})["y"]
    np.testing.assert_allclose(ours, ref, atol=FP16_ATOL)
    assert not np.array_equal(ours, np.zeros_like(ours))


def test_inputs_by_name_outputs_by_index_with_int32_and_fp16(backend, bins, onnx_dir):
    graph = qnnrt.Context.open(backend, bins["multi_io"].bin_path).graph()
    assert [t.name for t in graph.inputs] == ["c", "ids", "a"]
    # Feed in an order unlike both the binary's and the ONNX declaration's.
    feeds = multi_io_feeds()
    outs = graph.run(feeds)
    assert [o.dtype for o in outs] == [np.float32, np.float16, np.float32]
    ref = cpu_run(onnx_dir / "multi_io.onnx", feeds)
    for name, index in graph.output_index.items():
        np.testing.assert_allclose(
            outs[index].astype(np.float32), ref[name].astype(np.float32), atol=FP16_ATOL
        )
    theirs = qnn_session(bins["multi_io"].ctx_onnx_path).run(None, feeds)
    assert all(o.tobytes() == t.tobytes() for o, t in zip(outs, theirs))


def test_binary_order_need_not_match_the_reference_onnx_order(
    backend, bins, onnx_dir, tmp_path
):
    # The same graph declared with another I/O order stands in for a compiler that
    # reorders (AI Hub does): qnnrt follows the binary, never an ONNX order.
    import onnx

    model = onnx.load(str(onnx_dir / "multi_io.onnx"))
    inputs = {i.name: i for i in model.graph.input}
    outputs = {o.name: o for o in model.graph.output}
    del model.graph.input[:]
    del model.graph.output[:]
    model.graph.input.extend([inputs["a"], inputs["c"], inputs["ids"]])
    model.graph.output.extend([outputs["p"], outputs["emb"], outputs["s"]])
    onnx.save(model, str(tmp_path / "reordered.onnx"))
    graph = qnnrt.Context.open(backend, bins["multi_io"].bin_path).graph()
    assert [t.name for t in graph.outputs] == ["s", "emb", "p"]
    feeds = multi_io_feeds()
    sess = ort.InferenceSession(
        str(tmp_path / "reordered.onnx"), providers=["CPUExecutionProvider"]
    )
    ref = sess.run(None, feeds)  # ONNX order: p, emb, s
    outs = graph.run(feeds)  # binary order: s, emb, p
    for ref_i, name in enumerate(["p", "emb", "s"]):
        np.testing.assert_allclose(
            outs[graph.output_index[name]].astype(np.float32),
            ref[ref_i].astype(np.float32),
            atol=FP16_ATOL,
        )


@pytest.mark.parametrize(
    "name,dtype,zero_point", [("qdq8", np.uint8, 128), ("qdq16", np.uint16, 32768)]
)
def test_quantized_io_applies_scale_offset_both_ways(
    backend, bins, onnx_dir, name, dtype, zero_point
):
    graph = qnnrt.Context.open(backend, bins[name].bin_path).graph()
    (xin,), (yout,) = graph.inputs, graph.outputs
    assert xin.is_quantized and xin.quantization.offset == -zero_point
    x = np.linspace(-2, 2, 16, dtype=np.float32).reshape(1, 16)
    (y,) = graph.run({"xq": x})  # float in → quantized by qnnrt
    assert y.dtype == np.float32
    xq = xin.quantization.quantize(x, np.dtype(dtype))
    ref_q = cpu_run(onnx_dir / f"{name}.onnx", {"xq": xq})["yq"]
    ref = yout.quantization.dequantize(ref_q)
    np.testing.assert_allclose(y, ref, atol=yout.quantization.scale * 1.01)
    (raw,) = graph.run({"xq": xq}, raw=True)
    assert raw.dtype == dtype
    assert np.abs(raw.astype(np.int64) - ref_q.astype(np.int64)).max() <= 1


def test_two_graph_context(backend, two_graph_bin: Path):
    ctx = qnnrt.Context.open(backend, two_graph_bin)
    assert len(ctx.graphs) == 2
    with pytest.raises(ValueError, match="holds 2 graphs"):
        ctx.graph()
    ids = [t.id for g in ctx.graphs.values() for t in g.inputs + g.outputs]
    assert len(ids) == len(set(ids))  # ids are unique across the context
    by_inputs = {tuple(t.name for t in g.inputs): g for g in ctx.graphs.values()}
    mm = by_inputs[("x",)]
    mi = by_inputs[("c", "ids", "a")]
    x = np.ones((1, 64), np.float32)
    assert mm.run({"x": x})[0].shape == (1, 64)
    assert mi.run(multi_io_feeds())[2].shape == (3, 5)


# ------------------------------------------------------------------ zero copy
def test_bind_uses_the_callers_memory(backend, bins):
    graph = qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path).graph()
    x = np.random.default_rng(2).standard_normal((1, 64)).astype(np.float32)
    y = np.zeros((1, 64), np.float32)
    graph.bind("x", x)
    graph.bind(0, y)
    assert graph._in_v1[0].clientBuf.data == x.ctypes.data
    assert graph._out_v1[0].clientBuf.data == y.ctypes.data
    graph.execute()
    expected = graph.run({"x": x.copy()})[0].copy()  # y is bound: copy it
    assert graph.run()[0] is y  # bound outputs come back as the same object
    np.testing.assert_array_equal(y, expected)
    x[...] = 0  # in-place update is seen by the next execute: tanh(0 @ W) ~ 0
    graph.execute()
    np.testing.assert_allclose(y, np.zeros_like(y), atol=1e-3)
    assert np.abs(expected).max() > 0.1


def test_execute_allocates_nothing_per_call(backend, bins):
    graph = qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path).graph()
    x = np.ones((1, 64), np.float32)
    y = np.empty((1, 64), np.float32)
    graph.bind("x", x)
    graph.bind("y", y)
    for _ in range(20):
        graph.execute()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(1000):
            graph.execute()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # Only what qnnrt itself allocated: other threads (log callbacks, other
    # tests' leftovers) may allocate meanwhile and are not ours to measure.
    mine = [
        s
        for s in after.compare_to(before, "filename")
        if "/qnnrt/" in s.traceback[0].filename
    ]
    grown = sum(s.size_diff for s in mine)
    assert grown < 1000, mine  # 1,000 calls: under one byte per call


def test_kv_caches_bound_zero_copy_and_updated_in_place(backend, bins, onnx_dir):
    L, H, N, D = tm.KV_LAYERS, tm.KV_HEADS, tm.KV_LEN, tm.KV_DH
    graph = qnnrt.Context.open(backend, bins["kv_decode"].bin_path).graph()
    k, v = (
        backend.empty((L, H, N, D), np.float16),
        backend.empty((L, H, N, D), np.float16),
    )
    x = np.zeros((1, 1, H * D), np.float32)
    mask = np.full((1, 1, 1, N), -100.0, np.float32)
    y = np.empty((1, 1, H * D), np.float32)
    k_new, v_new = (
        np.empty((L, H, 1, D), np.float16),
        np.empty((L, H, 1, D), np.float16),
    )
    for name, arr in [
        ("x", x),
        ("k_cache", k),
        ("v_cache", v),
        ("mask", mask),
        ("y", y),
        ("k_new", k_new),
        ("v_new", v_new),
    ]:
        graph.bind(name, arr)
    ref_sess = ort.InferenceSession(
        str(onnx_dir / "kv_decode.onnx"), providers=["CPUExecutionProvider"]
    )
    rk, rv = np.zeros_like(k), np.zeros_like(v)
    rng = np.random.default_rng(3)
    for pos in range(20):
        x[...] = rng.standard_normal(x.shape).astype(np.float32)
        mask[..., :pos] = 0.0
        graph.execute()
        ry, rkn, rvn = ref_sess.run(
            None, {"x": x, "k_cache": rk, "v_cache": rv, "mask": mask}
        )
        np.testing.assert_allclose(y, ry, atol=5e-2, rtol=2e-2)
        k[:, :, pos], v[:, :, pos] = k_new[:, :, 0], v_new[:, :, 0]  # in place
        rk[:, :, pos], rv[:, :, pos] = rkn[:, :, 0], rvn[:, :, 0]
    assert graph.bound("k_cache") is k
    np.testing.assert_allclose(k.astype(np.float32), rk.astype(np.float32), atol=2e-2)


def test_timing_splits_host_overhead_from_graph_execute(bins):
    with qnnrt.Backend(profiling=True) as be:
        graph = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path).graph()
        graph.run({"x": np.ones((1, 64), np.float32)})
        t = graph.last_timing
    assert 0 < t.execute_s <= t.wall_s
    assert t.accelerator_s is not None and 0 < t.accelerator_s <= t.execute_s
