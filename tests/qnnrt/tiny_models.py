"""Tiny ONNX graphs for the qnnrt tests (random weights, seconds to compile)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

if TYPE_CHECKING:
    from scripts.common.qnn_shared import Shared

OPSET = 17
#: uint16 QuantizeLinear/DequantizeLinear need opset 21.
QDQ16_OPSET = 21
IR_VERSION = 10
_RNG_SEED = 1234


def _save(graph: onnx.GraphProto, path: Path, opset: int = OPSET) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _init(name: str, arr: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(arr, name)


def _vi(name: str, dtype: int, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def matmul_weights(n: int = 64, seed: int = _RNG_SEED) -> np.ndarray:
    """The ``W`` of :func:`matmul_tanh` (for a numpy reference)."""
    w = np.random.default_rng(seed).standard_normal((n, n)).astype(np.float32)
    return (w / np.sqrt(n)).astype(np.float32)


def matmul_tanh(
    path: Path, n: int = 64, seed: int = _RNG_SEED, act: str = "Tanh", rows: int = 1
) -> Path:
    """y = tanh(x @ W): the smallest real graph (``seed`` draws W; ``act``: another
    activation, e.g. Sigmoid; ``rows``: x is [rows, n], a static-shape bucket)."""
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["m"]),
            helper.make_node(act, ["m"], ["y"]),
        ],
        f"matmul_{act.lower()}",
        [_vi("x", TensorProto.FLOAT, [rows, n])],
        [_vi("y", TensorProto.FLOAT, [rows, n])],
        [_init("W", matmul_weights(n, seed))],
    )
    return _save(g, path)


#: (W seed, activation) of the two graphs of a shared binary that x86 runs:
#: distinct weights AND distinct ops.  Measured on the simulator (QNN 2.51): two
#: graphs of the same ops (MatMul -> Tanh twice) fail contextCreateFromBinary with
#: 1000 even with distinct weights, names or sizes; equal weights are
#: de-duplicated by the QNN EP and fail the same way (measured on QNN 2.51).
TWINS: Final = ((1, "Tanh"), (2, "Sigmoid"))
#: ... and the board-only variant: both graphs the same ops and W (weight sharing).
SAME: Final = ((_RNG_SEED, "Tanh"), (_RNG_SEED, "Tanh"))
#: numpy references of the activations above
ACTIVATIONS: Final = {"Tanh": np.tanh, "Sigmoid": lambda m: 1 / (1 + np.exp(-m))}


def twin_matmuls(
    out_dir: Path,
    graphs: Sequence[tuple[int, str]] = TWINS,
    *,
    name: str = "twin_matmuls",
    target: str = "simulator",
) -> Shared:
    """ONE context binary holding a :func:`matmul_tanh` graph per (seed,
    activation), all with I/O ``x`` -> ``y``; ``.graphs`` are in that order."""
    from scripts.common.qnn_shared import compile_shared

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [
        matmul_tanh(out_dir / f"{name}_{i}.onnx", seed=seed, act=act)
        for i, (seed, act) in enumerate(graphs)
    ]
    return compile_shared(paths, out_dir, name=name, target=target)


def twin_reference(x: np.ndarray, seed: int, act: str) -> np.ndarray:
    """What graph (seed, act) of :func:`twin_matmuls` computes, in numpy."""
    return ACTIVATIONS[act](x @ matmul_weights(x.shape[-1], seed)).astype(np.float32)


def multi_io(path: Path) -> Path:
    """Three inputs, three outputs, with int32 and fp16 I/O.

    Declared input order (c, ids, a) differs from the order the nodes consume
    them, and output order (s, emb, p) from the order they are produced.
    """
    rng = np.random.default_rng(_RNG_SEED)
    table = rng.standard_normal((32, 16)).astype(np.float32)
    nodes = [
        helper.make_node("Mul", ["a", "a"], ["p"]),
        helper.make_node("Gather", ["table", "ids"], ["emb32"], axis=0),
        helper.make_node("Cast", ["emb32"], ["emb"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["c"], ["c32"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["c32", "axes"], ["s"], keepdims=1),
    ]
    g = helper.make_graph(
        nodes,
        "multi_io",
        [
            _vi("c", TensorProto.FLOAT16, [2, 8]),
            _vi("ids", TensorProto.INT32, [1, 4]),
            _vi("a", TensorProto.FLOAT, [3, 5]),
        ],
        [
            _vi("s", TensorProto.FLOAT, [2, 1]),
            _vi("emb", TensorProto.FLOAT16, [1, 4, 16]),
            _vi("p", TensorProto.FLOAT, [3, 5]),
        ],
        [_init("table", table), _init("axes", np.array([1], np.int64))],
    )
    return _save(g, path)


def qdq(path: Path, dtype: int = TensorProto.UINT8) -> Path:
    """Quantized I/O: uint8/uint16 in, dequantize → Add → Relu → quantize → out."""
    np_dtype = {TensorProto.UINT8: np.uint8, TensorProto.UINT16: np.uint16}[dtype]
    zp = np.array(128 if dtype == TensorProto.UINT8 else 32768, np_dtype)
    scale_in = np.array(0.05, np.float32)
    scale_out = np.array(0.03, np.float32)
    bias = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)
    nodes = [
        helper.make_node("QuantizeLinear", ["bias", "s_b", "zp"], ["bias_q"]),
        helper.make_node("DequantizeLinear", ["bias_q", "s_b", "zp"], ["bias_dq"]),
        helper.make_node("DequantizeLinear", ["xq", "s_in", "zp"], ["x"]),
        helper.make_node("Add", ["x", "bias_dq"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s_out", "zp"], ["yq"]),
    ]
    g = helper.make_graph(
        nodes,
        "qdq",
        [_vi("xq", dtype, [1, 16])],
        [_vi("yq", dtype, [1, 16])],
        [
            _init("s_in", scale_in),
            _init("s_out", scale_out),
            _init("s_b", np.array(0.01, np.float32)),
            _init("zp", zp),
            _init("bias", bias),
        ],
    )
    return _save(g, path, QDQ16_OPSET if dtype == TensorProto.UINT16 else OPSET)


#: decode-graph dims: [layers, heads, L, dh] fp16 caches, width = heads * dh
KV_LAYERS, KV_HEADS, KV_LEN, KV_DH = 2, 2, 32, 8


def kv_decode(path: Path) -> Path:
    """One decode step of a tiny attention stack with fp16 K/V caches.

    Same shape contract as the T2S decode graph: the new token attends over
    [cache (masked) + itself]; the graph returns its k/v for the host to write
    into the caches at ``pos``.
    """
    import torch

    class Decode(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            width = KV_HEADS * KV_DH
            g = torch.Generator().manual_seed(_RNG_SEED)
            self.w = torch.nn.Parameter(
                torch.randn(KV_LAYERS, 4, width, width, generator=g) / width**0.5
            )

        def forward(self, x, k_cache, v_cache, mask):  # type: ignore[no-untyped-def]
            ks, vs = [], []
            scale = KV_DH**-0.5
            for layer in range(KV_LAYERS):
                w = self.w[layer]
                q = (x @ w[0]).view(KV_HEADS, 1, KV_DH)
                kn = (x @ w[1]).view(KV_HEADS, 1, KV_DH)
                vn = (x @ w[2]).view(KV_HEADS, 1, KV_DH)
                k = k_cache[layer].float()
                v = v_cache[layer].float()
                scores = torch.matmul(q, k.transpose(1, 2)) * scale + mask[0]
                own = (q * kn).sum(-1, keepdim=True) * scale
                p = torch.softmax(torch.cat([scores, own], -1), -1)
                o = torch.matmul(p[..., :-1], v) + p[..., -1:] * vn
                x = x + o.reshape(1, 1, -1) @ w[3]
                ks.append(kn)
                vs.append(vn)
            return x, torch.stack(ks).half(), torch.stack(vs).half()

    width = KV_HEADS * KV_DH
    cache = torch.zeros(KV_LAYERS, KV_HEADS, KV_LEN, KV_DH, dtype=torch.float16)
    args = (
        torch.zeros(1, 1, width),
        cache,
        cache.clone(),
        torch.zeros(1, 1, 1, KV_LEN),
    )
    torch.onnx.export(
        Decode().eval(),
        args,
        str(path),
        input_names=["x", "k_cache", "v_cache", "mask"],
        output_names=["y", "k_new", "v_new"],
        opset_version=OPSET,
        dynamo=False,
    )
    return path
