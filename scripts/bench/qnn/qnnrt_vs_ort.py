"""qnnrt vs onnxruntime-qnn on the same context binaries (x86 HTP simulator).

Prints, per graph: median wall time per execute for qnnrt ``execute()`` (bound
buffers), qnnrt ``run()`` and onnxruntime-qnn ``session.run``, interleaved in one
run; and qnnrt host overhead (wall − graphExecute) with full-size GPT-SoVITS decode
buffers (K and V [24, 16, 1024, 32] fp16) bound.

    python -m scripts.bench.qnn.qnnrt_vs_ort [--iters N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

import qnnrt
from scripts.bench import timing
from scripts.bench.standin import i64, save, vi
from scripts.common.qnn_compile import compile_onnx, qnn_session

#: GPT-SoVITS v2Pro T2S decode cache: layers, heads, KV length, head dim.
GSV_KV_SHAPE = (24, 16, 1024, 32)
GSV_WIDTH = 512
OVERHEAD_TARGET_MS = 0.1
#: the IR version both probes are written in (what onnxruntime-qnn loads here)
IR_VERSION = 10


def _kv_probe(path: Path) -> Path:
    """Full-size decode I/O with trivial compute: isolates host-side cost."""
    from onnx import TensorProto, helper

    f16, f32 = TensorProto.FLOAT16, TensorProto.FLOAT
    consts = [
        i64("starts", [0, 0, 0, 0]),
        i64("ends", [1, 1, 1, 32]),
        i64("shape", [1, 32]),
        i64("mask_starts", [0]),
        i64("mask_ends", [32]),
        i64("mask_axes", [3]),
    ]
    nodes = [  # logits = k[0,0,0,:32] + v[0,0,0,:32] + mask[..., :32]
        helper.make_node("Slice", ["k_cache", "starts", "ends"], ["ks"]),
        helper.make_node("Slice", ["v_cache", "starts", "ends"], ["vs"]),
        helper.make_node("Add", ["ks", "vs"], ["kv"]),
        helper.make_node("Reshape", ["kv", "shape"], ["kv2"]),
        helper.make_node("Cast", ["kv2"], ["kv32"], to=f32),
        helper.make_node(
            "Slice", ["mask", "mask_starts", "mask_ends", "mask_axes"], ["m"]
        ),
        helper.make_node("Reshape", ["m", "shape"], ["m2"]),
        helper.make_node("Add", ["kv32", "m2"], ["logits"]),
    ]
    kv = list(GSV_KV_SHAPE)
    graph = helper.make_graph(
        nodes,
        "kv_probe",
        [
            vi("k_cache", f16, kv),
            vi("v_cache", f16, kv),
            vi("mask", f32, [1, 1, 1, GSV_KV_SHAPE[2]]),
        ],
        [vi("logits", f32, [1, 32])],
        consts,
    )
    return save(graph, path, IR_VERSION)


def _matmul(path: Path, width: int = GSV_WIDTH) -> Path:
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).standard_normal((width, width)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        "matmul",
        [vi("x", TensorProto.FLOAT, [1, width])],
        [vi("y", TensorProto.FLOAT, [1, width])],
        [numpy_helper.from_array(w / np.float32(width**0.5), "W")],
    )
    return save(graph, path, IR_VERSION)


def _call_ms(fn: Callable[[], object]) -> float:
    """One call's wall time in ms: the rows interleave the three paths call by
    call, so machine noise hits all alike."""
    (seconds,) = timing.alone(lambda _i: fn(), 1)
    return seconds * 1e3


def bench(name: str, onnx_path: Path, tmp: Path, iters: int) -> dict[str, float]:
    compiled = compile_onnx(onnx_path, tmp, name=name)
    sess = qnn_session(compiled.ctx_onnx_path)
    with qnnrt.Backend() as backend:
        graph = qnnrt.Context.open(backend, compiled.bin_path).graph()
        feeds = {t.name: np.zeros(t.shape, t.native_dtype) for t in graph.inputs}
        for t in graph.inputs:
            graph.bind(t.name, feeds[t.name])
        for i, t in enumerate(graph.outputs):
            graph.bind(i, np.empty(t.shape, t.native_dtype))
        for _ in range(3):  # warm both paths
            graph.execute()
            sess.run(None, feeds)
        rows: dict[str, list[float]] = {
            "execute": [],
            "run": [],
            "ort": [],
            "overhead": [],
        }
        for _ in range(iters):  # interleaved so machine noise hits all alike
            rows["execute"].append(_call_ms(graph.execute))
            rows["overhead"].append(graph.last_timing.host_overhead_s * 1e3)
            rows["run"].append(_call_ms(lambda: graph.run()))
            rows["ort"].append(_call_ms(lambda: sess.run(None, feeds)))
    return {k: statistics.median(v) for k, v in rows.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.qnn.qnnrt_vs_ort")
    parser.add_argument("--iters", type=int, default=50)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        cases = [
            ("matmul_512", _matmul(tmp / "matmul.onnx")),
            ("gsv_kv_probe", _kv_probe(tmp / "kv_probe.onnx")),
        ]
        print(
            f"{'graph':<14} {'qnnrt execute':>14} {'qnnrt run':>10} "
            f"{'ort-qnn run':>12} {'ratio':>6} {'host overhead':>14}"
        )
        worst = 0.0
        for name, path in cases:
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            r = bench(name, path, tmp, args.iters)
            worst = max(worst, r["overhead"])
            print(
                f"{name:<14} {r['execute']:>11.3f} ms {r['run']:>7.3f} ms "
                f"{r['ort']:>9.3f} ms {r['ort'] / r['execute']:>5.2f}x "
                f"{r['overhead'] * 1e3:>10.1f} µs"
            )
    verdict = "OK" if worst <= OVERHEAD_TARGET_MS else "OVER TARGET"
    print(
        f"host overhead target ≤ {OVERHEAD_TARGET_MS} ms: worst "
        f"{worst * 1e3:.1f} µs ({verdict}); ratio = ort-qnn / qnnrt execute"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
